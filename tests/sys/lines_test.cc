// ForEachLine: lines across chunk boundaries, a final line without '\n', the line limit, early stop.
#include "sys/lines.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/temp_dir.h"

TEST_CASE("ForEachLine: streamed lines and their limit", "[sys][lines]") {
  const gp::test::TempDir dir("gpuprep-lines");
  std::string big(100000, 'x');  // longer than one 64 KiB chunk
  const std::string path = dir.Write("lines", "one\n" + big + "\n\nlast");
  std::vector<std::string> lines;
  CHECK(gp::sys::ForEachLine(path, 1 << 20, [&](std::string_view l, size_t) {
          lines.emplace_back(l);
          return true;
        }).empty());
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] == big);
  CHECK(lines[2].empty());
  CHECK(lines[3] == "last");
  CHECK(gp::sys::ForEachLine(path, 1000, [](std::string_view, size_t) { return true; }) ==
        std::string(path) + ":2: line longer than 1000 bytes");
  size_t seen = 0;
  gp::sys::ForEachLine(path, 1 << 20, [&](std::string_view, size_t) { return ++seen < 2; });
  CHECK(seen == 2);
  CHECK(gp::sys::ForEachLine("/nonexistent/x", 10, [](std::string_view, size_t) { return true; }) ==
        "cannot read /nonexistent/x: No such file or directory");
}
