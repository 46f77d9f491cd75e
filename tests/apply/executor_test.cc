// The executor against a temp dir as "/" (DiskFs), a FakeCommandRunner and a fake HTTP client: the exact
// command sequence, the files written, failure injection, reboot + resume, and an idempotent re-run.
#include "apply/executor.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <sstream>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/sources.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/planner.h"
#include "support/fakes.h"
#include "support/plan_host.h"
#include "sys/locks.h"
#include "sys/sha256.h"
#include "util/strings.h"

using namespace gp;
using gp::test::TempRoot;

namespace {

const std::string kKey = std::string("\x99\x01\x0d\x04test-key-bytes", 18);
const std::string kInstall =
    "apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -o "
    "DPkg::Lock::Timeout=600 "
    "install -- linux-headers-5.15.0-105-generic cuda-drivers=535.129.03-1 cuda-toolkit-12-2=12.2.2-1 "
    "libcudnn8=8.9.7.29-1+cuda12.2 libnccl2=2.18.5-1+cuda12.2 libnccl-dev=2.18.5-1+cuda12.2";
const std::string kHold = "apt-mark hold -- cuda-drivers cuda-toolkit-12-2 libcudnn8 libnccl-dev libnccl2";

// Captures spdlog output for the life of the object.
struct LogCapture {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  LogCapture() {
    auto logger =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(text));
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous); }
};

struct Host {
  TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  test::FakeCommandRunner runner;
  test::FakeHttp* http = nullptr;  // owned by the executor once created
  test::FakeNative native = test::FakeNative::Healthy(2);
  std::map<std::string, sys::HttpResponse> answers;
  int http_gets = 0;
  apply::Journal journal;
  apt::Index fresh;

  Host() {
    stack.repositories[0].keyring_sha256 = sys::Sha256Hex(kKey);
    answers["https://repo.example/cuda/key.gpg"] = {200, kKey, ""};
    // Behave like the real programs where later steps depend on it.
    runner.On("apt-get -y", test::Exit(0), -1, [this](const sys::Command&) { Dpkg(false); });
    runner.On("apt-mark hold", test::Exit(0), -1, [this](const sys::Command&) { Dpkg(true); });
    runner.On("apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update", test::Exit(0), -1,
              [this](const sys::Command&) {
                root.Write("/var/lib/apt/lists/" + apt::ListsPrefix(stack.repositories[0]) + "Packages",
                           test::RepoPackages(stack));
              });
    runner.On("systemctl enable", test::Exit(0), -1, [this](const sys::Command& c) {
      root.Symlink("/etc/systemd/system/" + c.argv[2],
                   "/etc/systemd/system/multi-user.target.wants/" + c.argv[2]);
    });
    runner.On("systemctl disable", test::Exit(0), -1, [this](const sys::Command& c) {
      root.fs().Remove("/etc/systemd/system/multi-user.target.wants/" + c.argv[2]);
    });
  }
  void Dpkg(bool held) {
    root.Write("/var/lib/dpkg/status", test::InstalledStackStatus(stack, held));
    if (!held) root.Write("/var/run/reboot-required", "*** System restart required ***\n");
    facts.driver.kernel_headers = true;
  }
  plan::Plan Plan(std::vector<std::string> verify = {}) {
    plan::PlanInput in;
    in.stack = &stack;
    in.facts = &facts;
    in.verify_layers = std::move(verify);
    plan::Plan p = test::PlanHost(in, root.fs());
    if (!p.needs_index) return p;
    // What `gpuprep apply` does before its first change: read the repository's current index, plan again.
    apt::ParsePackages(test::RepoPackages(stack), "amd64", fresh);
    in.index = &fresh;
    return test::PlanHost(in, root.fs());
  }
  apply::ExecResult Run(const plan::Plan& p) {
    apply::ExecEnv env;
    env.verify = layers::VerifyLayer;
    env.fs = &root.fs();
    env.runner = &runner;
    env.native = &native;
    env.stack = &stack;
    env.facts = &facts;
    env.self_path = "/opt/gpuprep/bin/gpuprep";
    env.now = [] { return std::string("2026-11-29T12:00:00Z"); };
    env.make_http = [this] {
      auto h = std::make_unique<test::FakeHttp>();
      h->answers = answers;
      http = h.get();
      ++http_gets;
      return h;
    };
    journal.stack = stack.name;
    return apply::Execute(p, journal, env);
  }
  // What the simulated reboot changes: /run emptied, the new module loaded, nouveau gone.
  void Reboot() {
    root.fs().Remove("/var/run/reboot-required");
    root.Write("/proc/driver/nvidia/version", test::kNvrm535);
    facts.driver.nouveau_loaded = false;
  }
};

}  // namespace

TEST_CASE("bare host: one apt transaction, reboot with the resume unit, resume verifies, re-run is empty",
          "[apply]") {
  Host h;
  auto p = h.Plan();
  auto r = h.Run(p);
  CHECK(r.exit_code == 3);
  CHECK(r.message ==
        "a reboot is required (/var/run/reboot-required exists; driver 535.129.03 is installed but no nvidia "
        "kernel "
        "module is loaded); reboot, and gpuprep-resume.service resumes after boot (or run: gpuprep apply "
        "--resume --yes)");
  CHECK(h.runner.Joined() ==
        std::vector<std::string>{"apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update",
                                 kInstall, "update-initramfs -u", kHold,
                                 "systemctl enable nvidia-persistenced.service", "systemctl daemon-reload",
                                 "systemctl enable gpuprep-resume.service"});
  CHECK(h.runner.calls[1].env == std::map<std::string, std::string>{{"DEBIAN_FRONTEND", "noninteractive"}});
  // Files: the key exactly as pinned, the signed-by list, the blacklist, the unit, the journal.
  CHECK(h.root.Read("/usr/share/keyrings/cuda-archive-keyring.gpg") == kKey);
  CHECK(h.root.Read("/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list") ==
        "# gpuprep: repository cuda of stack test-r535 (do not edit; gpuprep apply rewrites it)\n"
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://repo.example/cuda/ /\n");
  CHECK(h.root.Read("/etc/modprobe.d/blacklist-nouveau.conf") ==
        "blacklist nouveau\noptions nouveau modeset=0\n");
  const std::string unit = h.root.Read("/etc/systemd/system/gpuprep-resume.service");
  CHECK(unit.find("\nExecStart=/opt/gpuprep/bin/gpuprep apply --resume --yes\n") != std::string::npos);
  CHECK(unit.find("\nType=oneshot\n") != std::string::npos);
  CHECK(unit.find("\nWantedBy=multi-user.target\n") != std::string::npos);
  auto j = apply::ReadJournal(h.root.fs());
  REQUIRE(j);
  CHECK(j->state == "reboot-required");
  std::vector<std::string> ids;
  for (const auto& s : j->steps) ids.push_back(s.id + ":" + s.status);
  CHECK(ids == std::vector<std::string>{"repo.cuda.key:done", "repo.cuda.list:done", "apt.update:done",
                                        "apt.pin:done", "apt.install:done", "driver.nouveau:done",
                                        "apt.hold:done", "driver.persistenced:done", "reboot.check:done"});
  CHECK(j->touched_layers == std::vector<std::string>{"driver", "cuda", "cudnn", "nccl"});

  // Rerun before the reboot: nothing to install, the reboot is still required (detected again).
  h.runner.calls.clear();
  auto again = h.Plan(j->touched_layers);
  CHECK(again.steps.front().id == "reboot.check");
  CHECK(h.Run(again).exit_code == 3);
  CHECK_FALSE(h.root.Exists("/etc/systemd/system/gpuprep-resume.service.gpuprep-bak"));

  // After the reboot the resume unit's run verifies every touched layer and removes itself.
  h.Reboot();
  h.runner.calls.clear();
  auto resume = h.Plan(h.journal.touched_layers);
  std::vector<std::string> rids;
  for (const auto& s : resume.steps) rids.push_back(s.id);
  CHECK(rids == std::vector<std::string>{"verify.driver", "verify.cuda", "verify.cudnn", "verify.nccl"});
  r = h.Run(resume);
  CHECK(r.exit_code == 0);
  CHECK(r.message.empty());
  CHECK(h.runner.Joined() == std::vector<std::string>{"systemctl disable gpuprep-resume.service"});
  CHECK_FALSE(h.root.Exists("/etc/systemd/system/gpuprep-resume.service"));
  CHECK(apply::ReadJournal(h.root.fs())->state == "done");

  // Converged: the next plan is empty (no apt-get, no download).
  CHECK(h.Plan().steps.empty());
  CHECK(h.http_gets == 1);
}

TEST_CASE("a key whose sha256 does not match the pin fails before anything on the host changes", "[apply]") {
  Host h;
  h.answers["https://repo.example/cuda/key.gpg"] = {200, "tampered", ""};
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(r.message == "repo.cuda.key: https://repo.example/cuda/key.gpg: sha256 mismatch: downloaded " +
                         sys::Sha256Hex("tampered") + ", the stack pins " + sys::Sha256Hex(kKey) +
                         "; nothing was written");
  CHECK(h.runner.calls.empty());
  CHECK_FALSE(h.root.Exists("/usr/share/keyrings/cuda-archive-keyring.gpg"));
  CHECK_FALSE(h.root.Exists("/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"));
  CHECK_FALSE(h.root.Exists("/etc/modprobe.d/blacklist-nouveau.conf"));
  CHECK(apply::ReadJournal(h.root.fs())->state == "failed");
}

TEST_CASE("a key with another fingerprint is refused; the download is not left behind", "[apply]") {
  Host h;
  h.stack.repositories[0].keyring_sha256.clear();
  h.stack.repositories[0].key_fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC";
  h.runner.On("gpg --batch --quiet --no-autostart --show-keys --with-colons",
              test::Exit(0,
                         "pub:-:4096:1:A4B469963BF863CC:1649870220:::-:::scESC::::::23::0:\n"
                         "fpr:::::::::0000000000000000000000000000000000000000:\n"
                         "uid:-::::1649870220::ABC::cudatools <cudatools@nvidia.com>::::::::::0:\n"));
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(r.message ==
        "repo.cuda.key: https://repo.example/cuda/key.gpg: key fingerprint mismatch: the key is "
        "0000000000000000000000000000000000000000, the stack pins "
        "EB693B3035CD5710E231E123A4B469963BF863CC; nothing was written");
  REQUIRE(h.runner.calls.size() == 1);
  CHECK(h.runner.calls[0].stdin_data == kKey);
  CHECK(StartsWith(h.runner.calls[0].env.at("GNUPGHOME"), h.root.path() + "/var/lib/gpuprep/tmp/gnupg."));
  CHECK(h.root.fs().List("/var/lib/gpuprep/tmp").empty());  // the GnuPG home of the check is gone
  CHECK_FALSE(h.root.Exists("/usr/share/keyrings/cuda-archive-keyring.gpg"));

  // The right fingerprint (a subkey's fpr does not count, the primary's does) installs the key.
  Host ok;
  ok.stack.repositories[0].keyring_sha256.clear();
  ok.stack.repositories[0].key_fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC";
  // gpg reads the pinned primary key in the download and in what it exports of it; the export is the keyring.
  const std::string exported = kKey + "-exported";
  ok.runner.rules.insert(ok.runner.rules.begin(),
                         {"gpg --batch --quiet --no-autostart --show-keys",
                          test::Exit(0,
                                     "pub:-:4096:1:A4B469963BF863CC:1649870220:::-:::scESC::::::23::0:\n"
                                     "fpr:::::::::EB693B3035CD5710E231E123A4B469963BF863CC:\n"),
                          -1, nullptr});
  ok.runner.On("gpg --batch --quiet --no-autostart --export EB693B3035CD5710E231E123A4B469963BF863CC",
               test::Exit(0, exported));
  CHECK(ok.Run(ok.Plan()).exit_code == 3);
  CHECK(ok.root.Read("/usr/share/keyrings/cuda-archive-keyring.gpg") == exported);
  const auto gpg = ok.runner.Joined();
  CHECK(std::count_if(gpg.begin(), gpg.end(), [](const std::string& c) { return StartsWith(c, "gpg "); }) ==
        4);
}

TEST_CASE("apt-get install failing stops the run with apt's own last line; nothing after it runs",
          "[apply]") {
  Host h;
  h.runner.rules.insert(
      h.runner.rules.begin(),
      {"apt-get -y",
       test::Exit(100, "", "Reading package lists...\nE: Unable to locate package cuda-drivers\n"), -1,
       nullptr});
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(r.message ==
        "apt.install: " + kInstall + " exited with 100: E: Unable to locate package cuda-drivers");
  CHECK(h.runner.Joined().back() == kInstall);
  auto j = apply::ReadJournal(h.root.fs());
  CHECK(j->state == "failed");
  CHECK(j->steps.back().id == "apt.install");
  CHECK(j->steps.back().status == "failed");
  CHECK_FALSE(h.root.Exists("/etc/systemd/system/gpuprep-resume.service"));
}

TEST_CASE("a disk write error fails the step, stops before apt and takes back the key", "[apply]") {
  Host h;
  h.root.Write("/etc/apt/sources.list.d", "not a directory");
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(StartsWith(r.message, "repo.cuda.list: "));
  CHECK(h.runner.calls.empty());
  CHECK_FALSE(h.root.Exists("/usr/share/keyrings/cuda-archive-keyring.gpg"));
}

TEST_CASE("apt-get update failing (a bad signature) restores the sources as they were", "[apply]") {
  Host h;
  h.root.Write("/etc/apt/sources.list.d/old.list", "deb https://repo.example/cuda /\n");
  h.root.Write("/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list", "deb https://repo.example/cuda/ /\n");
  h.runner.rules.insert(
      h.runner.rules.begin(),
      {"apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update",
       test::Exit(100, "", "E: The repository 'https://repo.example/cuda  InRelease' is not signed.\n"), -1,
       nullptr});
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(r.message ==
        "apt.update: apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update exited with "
        "100: E: The repository "
        "'https://repo.example/cuda  InRelease' is not signed.");
  CHECK_FALSE(h.root.Exists("/usr/share/keyrings/cuda-archive-keyring.gpg"));
  CHECK(h.root.Read("/etc/apt/sources.list.d/old.list") == "deb https://repo.example/cuda /\n");
  CHECK(h.root.Read("/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list") ==
        "deb https://repo.example/cuda/ /\n");
  CHECK(h.root.fs().List("/etc/apt/sources.list.d") ==
        std::vector<std::string>{"cuda-ubuntu2204-x86_64.list", "old.list"});
  CHECK_FALSE(h.root.Exists("/etc/modprobe.d/blacklist-nouveau.conf"));
}

TEST_CASE("an interrupted dpkg is configured before the install", "[apply]") {
  Host h;
  h.root.Write("/var/lib/dpkg/updates/0001", "");
  h.runner.On("dpkg --configure -a", test::Exit(0), -1,
              [&h](const sys::Command&) { h.root.fs().Remove("/var/lib/dpkg/updates/0001"); });
  CHECK(h.Run(h.Plan()).exit_code == 3);
  CHECK(h.runner.Joined().front() == "dpkg --configure -a");
  CHECK(h.runner.calls.front().env.at("DEBIAN_FRONTEND") == "noninteractive");
}

TEST_CASE("a held apt lock is reported with its holder, then apt waits for it", "[apply]") {
  Host h;
  h.root.Write("/var/lib/dpkg/lock-frontend", "");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  if (child == 0) {
    int fd = ::open((h.root.path() + "/var/lib/dpkg/lock-frontend").c_str(), O_RDWR);
    struct flock fl;
    std::memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    ::fcntl(fd, F_SETLK, &fl);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  h.root.Write("/proc/" + std::to_string(child) + "/comm", "unattended-upgr\n");
  std::string logs;
  {
    LogCapture cap;
    CHECK(h.Run(h.Plan()).exit_code == 3);
    logs = cap.text.str();
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  CHECK(logs.find("waiting for the apt lock held by unattended-upgr (pid " + std::to_string(child) +
                  "), up to 600 s\n") != std::string::npos);
  const auto joined = h.runner.Joined();
  CHECK(std::count(joined.begin(), joined.end(), kInstall) == 1);
}

TEST_CASE("blockers stop apply before any change", "[apply]") {
  Host h;
  h.facts.driver.secure_boot = true;
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(StartsWith(r.message, "Secure Boot is on and stack test-r535 builds unsigned DKMS modules"));
  CHECK(h.runner.calls.empty());
  CHECK_FALSE(h.root.Exists(apply::kJournalPath));
}

TEST_CASE("verify failing after the reboot fails the run with the fix", "[apply]") {
  Host h;
  REQUIRE(h.Run(h.Plan()).exit_code == 3);
  h.Reboot();
  h.native.nvml.device_count = 1;  // a GPU fell off the bus
  auto r = h.Run(h.Plan(h.journal.touched_layers));
  CHECK(r.exit_code == 1);
  CHECK(r.message ==
        "verify.driver: NVML counts 1 GPUs but PCI shows 2 (fix: gpuprep doctor (a GPU may have fallen "
        "off the bus; check dmesg for Xid errors))");
  CHECK(h.root.Exists("/etc/systemd/system/gpuprep-resume.service"));  // kept for the next try
}

TEST_CASE("--reboot reboots through the runner after installing the unit", "[apply]") {
  Host h;
  apply::ExecEnv env;
  env.verify = layers::VerifyLayer;
  auto p = h.Plan();
  env.fs = &h.root.fs();
  env.runner = &h.runner;
  env.stack = &h.stack;
  env.facts = &h.facts;
  env.reboot = true;
  env.make_http = [&h] {
    auto f = std::make_unique<test::FakeHttp>();
    f->answers = h.answers;
    return f;
  };
  auto r = apply::Execute(p, h.journal, env);
  CHECK(r.exit_code == 3);
  CHECK(h.runner.Joined().back() == "systemctl reboot");
  CHECK(h.runner.Joined()[h.runner.calls.size() - 2] == "systemctl enable gpuprep-resume.service");
}

TEST_CASE("two applies never run at once", "[apply]") {
  TempRoot root;
  std::string why;
  auto first = sys::ApplyLock::TryAcquire(root.fs(), why);
  REQUIRE(first);
  auto second = sys::ApplyLock::TryAcquire(root.fs(), why);
  CHECK_FALSE(second);
  CHECK(why == "held by pid " + std::to_string(::getpid()));
  first.reset();
  CHECK(sys::ApplyLock::TryAcquire(root.fs(), why));
}

TEST_CASE("the journal round-trips and a corrupt one is a clear error", "[apply]") {
  apply::Journal j;
  j.manifest = "/sim/stack.yaml";
  j.stack = "s";
  j.only = {"driver"};
  j.state = "reboot-required";
  j.steps.push_back({"apt.install", {"driver", "cuda"}, "done", "t", ""});
  j.touched_layers = {"driver", "cuda"};
  auto back = apply::JournalFromText(apply::JournalToText(j));
  CHECK(back.manifest == j.manifest);
  CHECK(back.only == j.only);
  CHECK(back.state == j.state);
  CHECK(back.steps.size() == 1);
  CHECK(back.steps[0].layers == std::vector<std::string>{"driver", "cuda"});
  CHECK(back.touched_layers == j.touched_layers);
  CHECK_THROWS_WITH(apply::JournalFromText("{not json"),
                    Catch::StartsWith("/var/lib/gpuprep/journal.json: not a gpuprep journal ("));
}

TEST_CASE("on a terminal apt reports progress through APT::Status-Fd", "[apply]") {
  Host h;
  plan::PlanInput in;
  in.stack = &h.stack;
  in.facts = &h.facts;
  in.apt.status_fd = true;
  auto p = test::PlanHost(in, h.root.fs());
  h.runner.rules.insert(h.runner.rules.begin(),
                        {"apt-get -y", test::Exit(0), -1, [&h](const sys::Command& c) {
                           CHECK(c.status_fd == 3);
                           REQUIRE(c.on_status_line);
                           c.on_status_line("pmstatus:libcudnn8:50.0000:Installing libcudnn8 (amd64)");
                           c.on_status_line("not progress");
                           h.Dpkg(false);
                         }});
  std::vector<std::string> lines;
  apply::ExecEnv env;
  env.verify = layers::VerifyLayer;
  env.fs = &h.root.fs();
  env.runner = &h.runner;
  env.stack = &h.stack;
  env.facts = &h.facts;
  env.progress = [&lines](const std::string& l) { lines.push_back(l); };
  env.make_http = [&h] {
    auto f = std::make_unique<test::FakeHttp>();
    f->answers = h.answers;
    return f;
  };
  CHECK(apply::Execute(p, h.journal, env).exit_code == 3);
  CHECK(lines == std::vector<std::string>{"50% Installing libcudnn8 (amd64)"});
  const auto joined = h.runner.Joined();
  CHECK(std::find_if(joined.begin(), joined.end(), [](const std::string& s) {
          return s.find(" -o APT::Status-Fd=3 install ") != std::string::npos;
        }) != joined.end());
}

TEST_CASE("cuda, cudnn and nccl are verified by a new gpuprep process; its verdict is the step's",
          "[apply]") {
  // The probe that started this process loaded the libraries as they were; after a switch only a new process
  // loads the new ones (apply/verify_fresh.h).
  plan::Plan p;
  p.steps.push_back({"verify.cudnn", {"cudnn"}, "verify cudnn", {plan::Action::Verify("cudnn")}});
  p.steps.push_back({"verify.driver", {"driver"}, "verify driver", {plan::Action::Verify("driver")}});
  const std::string argv =
      "/opt/gpuprep/bin/gpuprep --manifest /etc/gpuprep/site.yaml -q --json verify --only cudnn";
  std::string logs;
  auto run = [&](test::FakeCommandRunner& runner) {
    TempRoot root;
    LogCapture log;  // after the TempRoot, which quiets the logs
    manifest::Stack stack = test::TestStack();
    probe::HostFacts facts = test::BareHost();
    test::FakeNative native = test::FakeNative::Healthy(2);
    apply::ExecEnv env;
    env.verify = layers::VerifyLayer;
    env.fs = &root.fs();
    env.runner = &runner;
    env.native = &native;
    env.stack = &stack;
    env.facts = &facts;
    env.self_path = "/opt/gpuprep/bin/gpuprep";
    env.fresh_verify = true;
    env.manifest = "/etc/gpuprep/site.yaml";
    apply::Journal j;
    auto r = apply::Execute(p, j, env);
    logs = log.text.str();
    return r;
  };
  SECTION("it passes: the driver is still verified here") {
    test::FakeCommandRunner runner;
    runner.On(argv, test::Exit(0, R"({"gpuprep": "0.1.0", "layers": [{"name": "cudnn", "status": "ok",
      "detail": "cuDNN 9.13.0 loads", "fix": null}]})"));
    auto r = run(runner);
    CHECK(runner.Joined() == std::vector<std::string>{argv});
    CHECK(logs.find("verified cudnn in a new process: cuDNN 9.13.0 loads") != std::string::npos);
    CHECK(r.exit_code == 1);  // verify.driver ran in this process (no module loaded in this temp root)
  }
  SECTION("it fails: the step fails with its detail and fix") {
    test::FakeCommandRunner runner;
    runner.On(argv, test::Exit(1, R"({"layers": [{"name": "cudnn", "status": "fail",
      "detail": "cuDNN 9.12.0 loaded but the stack pins 9.13.0.50", "fix": "sudo gpuprep apply --yes --only cudnn"}]})"));
    auto r = run(runner);
    CHECK(r.exit_code == 1);
    CHECK(r.message ==
          "verify.cudnn: cuDNN 9.12.0 loaded but the stack pins 9.13.0.50 (fix: sudo gpuprep apply --yes "
          "--only cudnn)");
  }
  SECTION("no answer (a crash, a usage error): the step fails saying so") {
    test::FakeCommandRunner runner;
    runner.On(argv, test::Exit(2, "", "gpuprep: error: --manifest: no such file\n"));
    auto r = run(runner);
    CHECK(r.exit_code == 1);
    CHECK(r.message == "verify.cudnn: verify in a new process (" + argv +
                           ") exited with 2: gpuprep: error: --manifest: no such file");
  }
}
