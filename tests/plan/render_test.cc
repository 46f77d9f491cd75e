// `gpuprep plan` output: the shell script an admin reviews (bash -n accepts it; exact lines), JSON, text,
// and the CLI on the bare-nouveau fixture tree through --root.
#include "plan/render.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apply/harness.h"
#include "apt/index.h"
#include "cli/context.h"
#include "layers/plan.h"
#include "plan/planner.h"
#include "support/cli.h"
#include "support/plan_host.h"
#include "sys/process.h"
#include "util/strings.h"

using namespace gp;

namespace {

plan::Plan BarePlan(test::TempRoot& root, manifest::Stack& stack, probe::HostFacts& facts) {
  stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  plan::PlanInput in;
  in.stack = &stack;
  in.facts = &facts;
  in.manifest = "/etc/gpuprep/site stack.yaml";
  static apt::Index index;  // the repository's index, as apply's preflight reads it
  index = apt::Index();
  apt::ParsePackages(test::RepoPackages(stack), "amd64", index);
  in.index = &index;
  return test::PlanHost(in, root.fs());
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

using Run = test::CliRun;
using test::Gpuprep;

}  // namespace

TEST_CASE("plan --format sh: set -eu and pipefail, a comment per step, exact quoted argv, heredoc writes",
          "[plan]") {
  test::TempRoot root;
  auto stack = test::TestStack();
  auto facts = test::BareHost();
  auto sh = plan::RenderSh(BarePlan(root, stack, facts));
  CHECK(StartsWith(
      sh, "#!/bin/bash\n# gpuprep plan for stack test-r535: the commands `gpuprep apply` runs, in order.\n"));
  CHECK(Has(sh, "if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi"));
  CHECK(Has(sh,
            "# 1. repository cuda: fetch the signing key https://repo.example/cuda/key.gpg and check its "
            "sha256 [repo.cuda.key]"));
  CHECK(Has(sh,
            "curl --fail --silent --show-error --location --proto-redir =https --output \"$tmp/key1\" "
            "https://repo.example/cuda/key.gpg"));
  CHECK(Has(sh, "echo " + std::string(64, 'a') + "\"  $tmp/key1\" | sha256sum --check --quiet"));
  CHECK(Has(sh,
            "gpuprep_write /etc/modprobe.d/blacklist-nouveau.conf 0644 backup <<'GPUPREP_EOF'\nblacklist "
            "nouveau\n"
            "options nouveau modeset=0\nGPUPREP_EOF"));
  CHECK(Has(sh,
            "DEBIAN_FRONTEND=noninteractive apt-get -y -o Dpkg::Options::=--force-confdef -o "
            "Dpkg::Options::=--force-confold -o DPkg::Lock::Timeout=600 install -- "
            "linux-headers-5.15.0-105-generic "
            "cuda-drivers=535.129.03-1 cuda-toolkit-12-2=12.2.2-1 libcudnn8=8.9.7.29-1+cuda12.2 "
            "libnccl2=2.18.5-1+cuda12.2 libnccl-dev=2.18.5-1+cuda12.2"));
  CHECK(Has(sh, "apt-mark hold -- cuda-drivers cuda-toolkit-12-2 libcudnn8 libnccl-dev libnccl2"));
  CHECK(Has(sh, "Package: libnccl2\nPin: version 2.18.5-1+cuda12.2\nPin-Priority: 1001"));
  CHECK(Has(sh, "gpuprep --manifest '/etc/gpuprep/site stack.yaml' verify --only driver"));
  // bash itself accepts the script.
  sys::RealCommandRunner runner;
  sys::Command cmd;
  cmd.argv = {"bash", "-n"};
  cmd.stdin_data = sh;
  auto res = runner.Run(cmd);
  INFO(res.err);
  CHECK(res.exit_code == 0);
}

TEST_CASE("plan --format json and text", "[plan]") {
  test::TempRoot root;
  auto stack = test::TestStack();
  auto facts = test::BareHost();
  auto p = BarePlan(root, stack, facts);
  auto j = plan::RenderJson(p);
  CHECK(j["stack"] == "test-r535");
  CHECK(j["layers"][0]["name"] == "driver");
  CHECK(j["layers"][0]["action"] == "install");
  CHECK(j["layers"][0]["found"].is_null());
  CHECK(j["steps"][3]["id"] == "apt.pin");
  CHECK(j["steps"][4]["actions"][0]["run"][0] == "apt-get");
  CHECK(j["steps"][4]["actions"][0]["env"]["DEBIAN_FRONTEND"] == "noninteractive");
  CHECK(j["steps"][0]["actions"][0]["sha256"] == std::string(64, 'a'));
  CHECK(j["steps"][5]["actions"][0]["write"] == "/etc/modprobe.d/blacklist-nouveau.conf");
  CHECK(j["blockers"].empty());
  auto text = plan::RenderText(p);
  CHECK(StartsWith(text,
                   "stack test-r535\n  driver         install  535.129.03 (found: none) missing: "
                   "cuda-drivers=535.129.03-1"));
  CHECK(Has(text, "5. one apt transaction for every missing package, pinned exactly [apt.install]"));
  CHECK(text.find(
            "\nreboot: the new driver loads only after a reboot (apply exits 3; with --reboot it reboots, "
            "and resumes after the boot)\n1. ") != std::string::npos);
  CHECK(j["reboot"] == true);
  CHECK(j["move"].is_null());
  CHECK(Has(plan::RenderSh(p), "# the new driver loads only after a reboot"));
  plan::Plan empty;
  empty.stack = "s";
  CHECK(plan::RenderText(empty) == "stack s\nnothing to do\n");
  CHECK(Has(plan::RenderSh(empty), "# nothing to do"));
}

TEST_CASE("plan --format sh keeps backups by apply's rule: never over an earlier one, never a duplicate",
          "[plan]") {
  test::TempRoot dir;
  const std::string file = dir.path() + "/etc/modprobe.d/blacklist-nouveau.conf";
  dir.Write("/etc/modprobe.d/blacklist-nouveau.conf", "admin's\n");
  dir.Write("/etc/modprobe.d/blacklist-nouveau.conf.gpuprep-bak", "as it was before gpuprep\n");
  plan::Plan p;
  p.steps.push_back(
      {"driver.nouveau", {"driver"}, "blacklist nouveau", {plan::Action::Write(file, "new\n")}});
  dir.Write("/plan.sh", plan::RenderSh(p));
  sys::RealCommandRunner runner;
  sys::Command run;
  run.argv = {"bash", dir.path() + "/plan.sh"};
  auto r = runner.Run(run);
  INFO(r.err);
  REQUIRE(r.ok());
  CHECK(dir.Read("/etc/modprobe.d/blacklist-nouveau.conf") == "new\n");
  CHECK(dir.Read("/etc/modprobe.d/blacklist-nouveau.conf.gpuprep-bak") == "as it was before gpuprep\n");
  CHECK(dir.Read("/etc/modprobe.d/blacklist-nouveau.conf.gpuprep-bak.1") == "admin's\n");
  // Run again over what it holds now, after the file got back the admin's bytes: .gpuprep-bak.1 has them.
  dir.Write("/etc/modprobe.d/blacklist-nouveau.conf", "admin's\n");
  REQUIRE(runner.Run(run).ok());
  CHECK(dir.fs().List("/etc/modprobe.d").size() == 3);
}

TEST_CASE("gpuprep plan --root on the bare-nouveau fixture prints the admin's script", "[plan]") {
  const std::string root = std::string(GP_FIXTURES) + "/hosts/bare-nouveau";
  Run r = Gpuprep({"--root", root, "--manifest", "ubuntu22.04-r535-cuda12.2", "plan", "--format", "sh"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(StartsWith(r.out, "#!/bin/bash\n"));
  // No apt lists under the root: after apt-get update the script stops and prints the command for the rest of
  // the plan, which gpuprep makes from the index just fetched (exact versions, the closure); that command and
  // --one-shot are tested in render_stages_test.cc.
  CHECK(r.out.find("plan --format sh > gpuprep-plan-2.sh' '  bash gpuprep-plan-2.sh'\nexit 0\n") !=
        std::string::npos);
  CHECK(r.out.find("exec bash") == std::string::npos);
  CHECK(r.out.find("apt-get -y") == std::string::npos);  // the install itself is in the re-made plan
  // The toolkit joins the same pinned transaction (layers/container_toolkit/plan.cc); Docker is not set up by
  // this stack.
  CHECK(r.out.find("\n# layer container_toolkit: install - missing: nvidia-container-toolkit 1.19.1") !=
        std::string::npos);
  CHECK(r.out.find("\n# layer docker: n/a - Docker is not installed and stack ubuntu22.04-r535-cuda12.2 does "
                   "not set it "
                   "up") != std::string::npos);

  r = Gpuprep({"--root", root, "--manifest", "ubuntu22.04-r535-cuda12.2", "plan", "--format", "yaml"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --format: must be text, sh or json, not \"yaml\"\n");
  r = Gpuprep({"--root", root, "--manifest", "ubuntu22.04-r535-cuda12.2", "plan", "--skip", "cuda,drivr"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --skip: unknown layer \"drivr\" (did you mean \"driver\"?)\n");
}

TEST_CASE("gpuprep apply refuses --root and missing --yes with exit 2, before touching anything", "[apply]") {
  const std::string root = std::string(GP_FIXTURES) + "/hosts/bare-nouveau";
  Run r = Gpuprep({"--root", root, "apply", "--yes"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: --root: apply changes the live host; review a tree with: gpuprep plan --root DIR\n");
  // Root is a seam (cli::Context::root): both answers are checked whatever uid runs the tests.
  r = Gpuprep({"--manifest", "ubuntu22.04-r535-cuda12.2", "apply"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: apply: must run as root (try: sudo gpuprep apply --yes)\n");
  test::CliOptions as_root;
  as_root.root = true;
  r = Gpuprep({"--manifest", "ubuntu22.04-r535-cuda12.2", "apply"}, as_root);
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --yes: required to change the host (review first with: gpuprep plan)\n");
  r = Gpuprep({"--manifest", "ubuntu22.04-r535-cuda12.2", "apply", "--only", "cudaa"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --only: unknown layer \"cudaa\" (did you mean \"cuda\"?)\n");
}

TEST_CASE("gpuprep apply --resume without a journal is a usage error", "[apply]") {
  test::TempRoot root;
  sys::DiskFs fs("/");
  std::ostringstream out, err;
  cli::Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.local_fs = &fs;
  ctx.root = true;  // the root check comes first; a seam, so this runs as any uid
  const std::string dir = root.path();
  ctx.make_fs = [dir](const std::string&) { return std::make_unique<sys::DiskFs>(dir); };
  const char* argv[] = {"gpuprep", "apply", "--resume", "--yes"};
  CHECK(cli::RunCli(4, argv, ctx) == 2);
  CHECK(err.str() == "gpuprep: error: --resume: no journal at /var/lib/gpuprep/journal.json\n");
}
