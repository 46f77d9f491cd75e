// `plan --format sh` is the script that runs: the stack pinned by its documents' sha256 and every flag of the
// plan carried into each later call of gpuprep; by default the script stops after the repository setup and
// prints the command for the second script (to review); --one-shot keeps one run. Values reach the shell
// single-quoted: a hostile manifest path comes back word for word through bash.
#include <catch2/catch.hpp>
#include <filesystem>

#include "manifest/digest.h"
#include "manifest/loader.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "sys/process.h"
#include "util/embedded.h"
#include "util/strings.h"

using namespace gp;

namespace {

namespace fs = std::filesystem;
const char* kStack = "ubuntu22.04-r535-cuda12.2";

std::string Root() { return std::string(GP_FIXTURES) + "/hosts/bare-nouveau"; }

std::string EmbeddedSha256(const std::string& name) {
  return manifest::DocumentsSha256(manifest::LoadStack(name, manifest::LoadContext{}));
}

// What bash prints when it runs the script's one printf line (the stop message and the command).
std::string PrintedByStop(const std::string& script) {
  const size_t at = script.find("\nprintf '%s\\n' 'gpuprep: the repositories are set up.");
  REQUIRE(at != std::string::npos);
  const std::string line = script.substr(at + 1, script.find('\n', at + 1) - at - 1);
  sys::RealCommandRunner runner;
  sys::Command c;
  c.argv = {"bash", "-c", line};
  auto r = runner.Run(c);
  REQUIRE(r.ok());
  return r.out;
}

// The words bash reads from `command` (one line of shell ending with the script's redirection), without
// running it and without the redirection.
std::vector<std::string> Words(std::string command) {
  const std::string redirect = " > gpuprep-plan-2.sh";
  REQUIRE(EndsWith(command, redirect));
  command.resize(command.size() - redirect.size());
  sys::RealCommandRunner runner;
  sys::Command c;
  c.argv = {"bash", "-c", "eval \"set -- $1\"; printf '%s\\0' \"$@\"", "bash", command};
  auto r = runner.Run(c);
  REQUIRE(r.ok());
  std::vector<std::string> out = Split(r.out, '\0');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("plan --format sh stops after the repository setup and prints the pinned second command",
          "[plan][sh]") {
  const std::string sha = EmbeddedSha256(kStack);
  auto r = test::Gpuprep({"--root", Root(), "--manifest", kStack, "plan", "--format", "sh", "--skip",
                          "driver", "--only", "driver,cuda,cudnn,nccl", "--restart-docker"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("exec bash") == std::string::npos);  // nothing made at run time runs unreviewed
  CHECK(r.out.find("rest=") == std::string::npos);
  CHECK(r.out.find("\nexit 0\n") != std::string::npos);
  const auto printed = Split(PrintedByStop(r.out), '\n');
  REQUIRE(printed.size() >= 3);
  CHECK(StartsWith(printed[0], "gpuprep: the repositories are set up."));
  CHECK(printed[2] == "  bash gpuprep-plan-2.sh");
  const auto words = Words(printed[1]);
  CHECK(words == std::vector<std::string>{"gpuprep", "--root", Root(), "--manifest", kStack,
                                          "--manifest-sha256", sha, "plan", "--format", "sh", "--only",
                                          "driver,cuda,cudnn,nccl", "--skip", "driver", "--restart-docker"});
  // the printed command is ready to run: its output goes to the second script
  CHECK(EndsWith(printed[1], " > gpuprep-plan-2.sh"));
}

TEST_CASE("plan --format sh --one-shot runs the rest itself, flags and hash carried", "[plan][sh]") {
  const std::string sha = EmbeddedSha256(kStack);
  auto r = test::Gpuprep(
      {"--root", Root(), "--manifest", kStack, "plan", "--format", "sh", "--one-shot", "--skip", "driver"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\nrest=\"$(gpuprep --root " + Root() + " --manifest " + kStack + " --manifest-sha256 " +
                   sha + " plan --format sh --one-shot --skip driver)\"\n") != std::string::npos);
  CHECK(r.out.find("\nGPUPREP_REPLANNED=1 exec bash -c \"$rest\"\n") != std::string::npos);
  r = test::Gpuprep({"--root", Root(), "--manifest", kStack, "plan", "--one-shot"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --one-shot: only with --format sh\n");
}

TEST_CASE("plan --format sh: a hostile manifest path reaches the shell as one word", "[plan][sh]") {
  const test::TempDir tmp("gpuprep-stages");
  const std::string hostile = "/it's $(touch pwned) `id` \"q\" \\ ; | & *";  // a directory's name
  const EmbeddedFile* f = FindEmbedded(std::string("manifests/stacks/") + kStack + ".yaml");
  REQUIRE(f);
  const std::string path = tmp.Write(hostile + "/stack.yaml", std::string(f->data, f->size));
  auto r = test::Gpuprep({"--root", Root(), "--manifest", path, "plan", "--format", "sh"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto printed = Split(PrintedByStop(r.out), '\n');
  REQUIRE(printed.size() >= 2);
  const auto words = Words(printed[1]);
  REQUIRE(words.size() >= 7);
  CHECK(words[4] == path);
  CHECK(words[6] == EmbeddedSha256(kStack));  // one document, the same bytes: the same sha256 (sha256sum's)
  CHECK_FALSE(fs::exists("pwned"));
  CHECK_FALSE(fs::exists(tmp.path + hostile + "/pwned"));
}

TEST_CASE("--manifest-sha256: the stack must still hash to it", "[plan][sh][cli]") {
  const std::string sha = EmbeddedSha256(kStack);
  auto r = test::Gpuprep({"--root", Root(), "--manifest", kStack, "--manifest-sha256", sha, "plan"});
  CHECK(r.code == 0);
  const test::TempDir tmp("gpuprep-stages");
  const EmbeddedFile* f = FindEmbedded(std::string("manifests/stacks/") + kStack + ".yaml");
  REQUIRE(f);
  const std::string path =
      tmp.Write("/changed/stack.yaml", std::string(f->data, f->size) + "# changed after the plan was made\n");
  r = test::Gpuprep(
      {"--root", Root(), "--manifest", path, "--manifest-sha256", sha, "plan", "--format", "sh"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(StartsWith(r.err, "gpuprep: error: --manifest-sha256: the stack " + path + " now has sha256 "));
  CHECK(
      EndsWith(r.err, ", not " + sha + ": it changed since the plan was made; make and review a new plan\n"));
  r = test::Gpuprep({"--root", Root(), "--manifest", kStack, "--manifest-sha256", "sha256:" + sha, "plan"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --manifest-sha256: must be 64 lower-case hex digits (a sha256)\n");
  r = test::Gpuprep({"--root", Root(), "--manifest-sha256", sha, "plan"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --manifest-sha256: pins the stack --manifest names; give --manifest too\n");
}
