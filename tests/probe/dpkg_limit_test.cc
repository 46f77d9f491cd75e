// A dpkg status file over the read limit is said to be so, and nothing is judged from it: no package
// reads as missing because its database could not be read.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "apply/harness.h"
#include "probe/state.h"
#include "util/error.h"

using namespace gp;

TEST_CASE("dpkg: a status file over the read limit stops the reading, said as such", "[probe][dpkg]") {
  test::TempRoot root;
  std::filesystem::create_directories(root.path() + "/var/lib/dpkg");
  const std::string status = root.path() + "/var/lib/dpkg/status";
  std::fclose(std::fopen(status.c_str(), "w"));
  REQUIRE(::truncate(status.c_str(), 98000000) == 0);
  try {
    probe::ReadDpkgDatabase(root.fs());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "cannot read /var/lib/dpkg/status: larger than the 64 MiB limit; the installed packages cannot be "
          "judged");
  }
}
