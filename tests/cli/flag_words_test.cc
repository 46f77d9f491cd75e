// CLI11's own wordings become gpuprep's one-line "--flag: message" form.
#include <catch2/catch.hpp>

#include "support/cli.h"

using gp::test::Gpuprep;

TEST_CASE("cli: a value that is not a number, and an argument not expected, in gpuprep's words",
          "[cli][hardening]") {
  auto r = Gpuprep({"launch", "--nodes", "99999999999"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --nodes: \"99999999999\" is not a number in range\n");
  r = Gpuprep({"doctor", "extra"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: \"extra\": not an option or argument of this command\n");
}
