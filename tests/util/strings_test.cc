// util/strings: the edit distance behind every "did you mean".
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "util/strings.h"

TEST_CASE("edit distance counts an adjacent transposition as one edit", "[util]") {
  CHECK(gp::EditDistance("cdua", "cuda") == 1);
  CHECK(gp::EditDistance("drivr", "driver") == 1);
  CHECK(gp::EditDistance("abc", "cba") == 2);
  CHECK(gp::EditDistance("", "abc") == 3);
  CHECK(gp::DidYouMean("cdua", {"cuda", "nvidia-container-toolkit"}) == std::optional<std::string>("cuda"));
  CHECK_FALSE(gp::DidYouMean("mirror", {"cuda", "nvidia-container-toolkit"}).has_value());
}
