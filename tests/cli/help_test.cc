// `gpuprep --help` and each verb's --help: every verb listed with its one-line help, and a verb's own options
// present when the command line names it (RunCli adds a verb's options only then).
#include <catch2/catch.hpp>

#include "cli/commands.h"
#include "support/cli.h"

using gp::test::Gpuprep;

TEST_CASE("cli: --help lists every verb with its help line", "[cli]") {
  auto r = Gpuprep({"--help"});
  REQUIRE(r.code == 0);
  for (const gp::cli::Verb& verb : gp::cli::kVerbs) {
    INFO(verb.name);
    CHECK(r.out.find(verb.name) != std::string::npos);
    CHECK(r.out.find(verb.help) != std::string::npos);
  }
}

TEST_CASE("cli: a verb named on the command line has its options, global options anywhere", "[cli]") {
  auto r = Gpuprep({"size", "--help"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("--task") != std::string::npos);
  CHECK(r.out.find("--check-host") != std::string::npos);
  CHECK(r.out.find("--fast") == std::string::npos);  // accept's
  r = Gpuprep({"--json", "accept", "--help"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("--fast") != std::string::npos);
  // Another verb's option is refused as it was when every verb had its options.
  r = Gpuprep({"nccl-log", "--check-host"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: \"--check-host\": not an option or argument of this command\n");
}

TEST_CASE("cli: an unknown verb still gets its suggestion from every verb's name", "[cli]") {
  auto r = Gpuprep({"fleet-reprot"});
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean \"fleet-report\"") != std::string::npos);
}
