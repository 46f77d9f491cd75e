// A loaded kernel module whose version cannot be parsed is not "in agreement" with the userspace driver.
#include <catch2/catch.hpp>

#include "layers/sample.h"
#include "verdict/rules.h"

using namespace gp;
using verdict::Status;

TEST_CASE("driver: an unparseable kernel module version fails instead of agreeing", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.loaded = true;
  t.host.driver.module.version = "garbage\x1b[2J";
  auto r = layers::CheckDriver(t.in());
  CHECK(r.status == Status::kFail);
  bool said = false;
  for (const auto& f : r.findings) {
    CHECK(f.message != "kernel module and userspace driver agree");
    if (f.message.find("cannot be read, so it cannot be compared") != std::string::npos) said = true;
  }
  CHECK(said);
}
