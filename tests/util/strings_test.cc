// util/strings: the edit distance behind every "did you mean".
#include "util/strings.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>

TEST_CASE("edit distance counts an adjacent transposition as one edit", "[util]") {
  CHECK(gp::EditDistance("cdua", "cuda") == 1);
  CHECK(gp::EditDistance("drivr", "driver") == 1);
  CHECK(gp::EditDistance("abc", "cba") == 2);
  CHECK(gp::EditDistance("", "abc") == 3);
  CHECK(gp::DidYouMean("cdua", {"cuda", "nvidia-container-toolkit"}) == std::optional<std::string>("cuda"));
  CHECK_FALSE(gp::DidYouMean("mirror", {"cuda", "nvidia-container-toolkit"}).has_value());
}

TEST_CASE("sizes as go-units' RAMInBytes reads them: binary units, fractions truncated", "[util]") {
  using gp::ParseBytes;
  CHECK(ParseBytes("0.3MB") == 314572ULL);  // 314572.8, truncated
  CHECK(ParseBytes("1.999999b") == 1ULL);
  CHECK(ParseBytes("64m") == 64ULL << 20);
  CHECK(ParseBytes("16GiB") == 16ULL << 30);
  CHECK(ParseBytes("512 MB") == 512ULL << 20);
  CHECK(ParseBytes("1kib") == 1024ULL);
  CHECK(ParseBytes("1 KiB") == 1024ULL);
  CHECK(ParseBytes("3b") == 3ULL);
  CHECK(ParseBytes("2p") == 2ULL << 50);
  CHECK(ParseBytes("1 ") == 1ULL);
  CHECK(ParseBytes("9007199254740993") == 9007199254740992ULL);  // through a double, as go-units
  CHECK(ParseBytes("0.00000000000000000000000000000000000000000000000000001k") == 0ULL);
  for (const char* bad : {"", " 1", "1.", ".5", "1.2.3", "-1", "+1", "1e3", "1kk", "1bb", "1  b", "k",
                          "9223372036854775808", "8192p", "1\n"})
    CHECK_FALSE(ParseBytes(bad));
}

TEST_CASE("sizes: the suffixes go-units v0.5.0 refuses are refused", "[util]") {
  // go-units size.go at v0.5.0 (e682442797b36348f8e1f98defdbf32bac0b6c6f), parseSize: the suffix is "b",
  // a unit letter, the letter and "b", or the letter and "ib"; "i" alone, a letter and "i", and "ib" are
  // refused. (The older sizeRegex of go-units 0.4.0 accepted them.)
  using gp::ParseBytes;
  for (const char* bad : {"16i", "1.98mi", "512.5ib", "1ki", "1 Mi", "1iB", "1 i", "2pi"})
    CHECK_FALSE(ParseBytes(bad));
}
