// The apply sequence (apply/sequence.h) on a temp dir as "/" (DiskFs) with a recording command runner, a
// fake HTTP client, a fake clock and root/lock seams: the refusals before anything is read, the preflight
// and the re-plan with the index it fetched, the kernel headers asked of the host's own sources, the
// reboot-required exit, the resume that continues the journal's run, the apply lock, a failing step, and
// status.json plus the callback at every exit past the lock.
#include "apply/sequence.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "apply/journal.h"
#include "apply/preflight.h"
#include "apply/status.h"
#include "apt/sources.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "support/fakes.h"
#include "sys/locks.h"
#include "sys/sha256.h"
#include "util/error.h"
#include "util/strings.h"

using namespace gp;
using gp::test::TempRoot;

namespace {

const std::string kSequenceKey = std::string("\x99\x01\x0d\x04sequence-key", 16);
const std::string kCallback = "https://hooks.example/gpu-ready";
const std::string kSpec = "/etc/gpuprep/test-r535.yaml";
const std::string kCuda = "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list";

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The value of `-o KEY=VALUE` in an argv ("" when absent).
std::string Option(const sys::Command& c, const std::string& key) {
  for (const auto& w : c.argv)
    if (StartsWith(w, key + "=")) return w.substr(key.size() + 1);
  return "";
}

// A bare server as the sequence sees it. The fake programs do what later steps read back: apt-get update
// writes lists (the stack repository's into the directory it was given, the distribution's with or without
// the running kernel's headers), apt-get install and apt-mark write dpkg's status, systemctl enables units.
struct Server {
  TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  test::FakeCommandRunner runner;
  test::FakeNative native = test::FakeNative::Healthy(2);
  bool headers_published = true;
  bool root_user = true;
  std::vector<std::string> loads;  // the manifest spec of each load
  std::vector<std::string> said, file_log;
  int ticks = 0;
  apply::ApplySeams seams;
  apply::ApplyOutput out;

  Server() {
    seams.plan = layers::BuildPlan;
    seams.reads = layers::HostReads;
    seams.verify = layers::VerifyLayer;
    stack.repositories[0].keyring_sha256 = sys::Sha256Hex(kSequenceKey);
    runner.On("apt-get -q", test::Exit(0), -1, [this](const sys::Command& c) { PrivateUpdate(c); });
    runner.On("apt-get -o DPkg::Lock::Timeout=", test::Exit(0), -1, [this](const sys::Command&) {
      root.Write("/var/lib/apt/lists/" + apt::ListsPrefix(stack.repositories[0]) + "Packages",
                 test::RepoPackages(stack));
    });
    runner.On("apt-get -y", test::Exit(0), -1, [this](const sys::Command&) { Dpkg(false); });
    runner.On("apt-mark hold", test::Exit(0), -1, [this](const sys::Command&) { Dpkg(true); });
    runner.On("systemctl enable", test::Exit(0), -1, [this](const sys::Command& c) {
      root.Symlink("/etc/systemd/system/" + c.argv[2],
                   "/etc/systemd/system/multi-user.target.wants/" + c.argv[2]);
    });
    runner.On("systemctl disable", test::Exit(0), -1, [this](const sys::Command& c) {
      root.fs().Remove("/etc/systemd/system/multi-user.target.wants/" + c.argv[2]);
    });
    seams.is_root = [this] { return root_user; };
    seams.now = [this] {  // one second later at every reading
      const int t = ticks++;
      auto two = [](int n) { return std::string(n < 10 ? "0" : "") + std::to_string(n); };
      return "2026-11-29T12:" + two(t / 60 % 60) + ":" + two(t % 60) + "Z";
    };
    seams.host = [this] { return std::make_unique<sys::DiskFs>(root.path()); };
    seams.load = [this](const std::string& manifest) {
      loads.push_back(manifest);
      apply::ApplyTarget t;
      t.fs = std::make_unique<sys::DiskFs>(root.path());
      t.facts = facts;
      t.stack = stack;
      t.manifest = manifest;
      t.spec = kSpec;
      return t;
    };
    seams.open_log = [this](sys::Fs&) {
      return [this](const std::string& line) { file_log.push_back(line); };
    };
    seams.runner = &runner;
    seams.native = &native;
    seams.make_http = [] {
      auto h = std::make_unique<test::FakeHttp>();
      h->answers["https://repo.example/cuda/key.gpg"] = {200, kSequenceKey, ""};
      return h;
    };
    seams.self_path = "/opt/gpuprep/bin/gpuprep";
    out.say = [this](const std::string& line) { said.push_back(line); };
  }

  // apt-get update into a private lists directory: apply's preflight (the stack's sources) or the host's
  // own sources (the distribution archive).
  void PrivateUpdate(const sys::Command& c) {
    const std::string lists = Option(c, "Dir::State::Lists");
    std::string name = "repo_Packages", text;
    if (EndsWith(Option(c, "Dir::Etc::SourceList"), "/etc/apt/sources.list")) {
      text = "Package: linux-headers-5.15.0-25-generic\nVersion: 5.15.0-25.25\n\n";
      if (headers_published) text += "Package: linux-headers-5.15.0-105-generic\nVersion: 5.15.0-105.115\n\n";
    } else {
      name = apt::ListsPrefix(stack.repositories[0]) + "Packages";
      text = test::RepoPackages(stack);
    }
    std::ofstream(lists + "/" + name) << text;
  }
  void Dpkg(bool held) {
    root.Write("/var/lib/dpkg/status", test::InstalledStackStatus(stack, held));
    if (!held) root.Write("/var/run/reboot-required", "*** System restart required ***\n");
    facts.driver.kernel_headers = true;
  }
  // The reboot: /run emptied, the new module loaded, nouveau gone.
  void Reboot() {
    root.fs().Remove("/var/run/reboot-required");
    root.Write("/proc/driver/nvidia/version", test::kNvrm535);
    facts.driver.nouveau_loaded = false;
  }

  apply::ApplyResult Apply(apply::ApplyOptions o = Yes()) {
    runner.calls.clear();
    said.clear();
    return apply::RunApply(std::move(o), seams, out);
  }
  // Runs the sequence expecting it to throw: the error's exit code and message.
  std::pair<int, std::string> Fails(apply::ApplyOptions o = Yes()) {
    try {
      Apply(std::move(o));
    } catch (const Error& e) {
      return {e.code(), e.what()};
    }
    return {0, "did not fail"};
  }
  static apply::ApplyOptions Yes() {
    apply::ApplyOptions o;
    o.yes = true;
    return o;
  }
  nlohmann::json Status() const { return nlohmann::json::parse(root.Read(apply::kStatusPath)); }
  std::vector<std::string> Commands() const {
    std::vector<std::string> names;
    for (const auto& c : runner.calls)
      names.push_back(c.argv[0] + " " + (c.argv.size() > 1 ? c.argv[1] : ""));
    return names;
  }
  bool Ran(const std::string& prefix) const {
    for (const auto& j : runner.Joined())
      if (StartsWith(j, prefix)) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("apply refuses without root, --yes or a usable callback before it reads or changes anything",
          "[apply][sequence]") {
  Server s;
  s.root_user = false;
  CHECK(s.Fails() ==
        std::pair<int, std::string>{2, "apply: must run as root (try: sudo gpuprep apply --yes)"});
  s.seams.is_root = nullptr;  // no answer: not root
  CHECK(s.Fails().first == 2);
  s.seams.is_root = [] { return true; };
  apply::ApplyOptions o;
  CHECK(s.Fails(o) == std::pair<int, std::string>{
                          2, "--yes: required to change the host (review first with: gpuprep plan)"});
  o.yes = true;
  o.callback = "http://hooks.example/x";
  CHECK(s.Fails(o).first == 2);
  CHECK(StartsWith(s.Fails(o).second, "--callback: "));
  // Nothing was loaded, run or written.
  CHECK(s.loads.empty());
  CHECK(s.runner.calls.empty());
  CHECK(s.root.fs().List("/").empty());
}

TEST_CASE("a bare host: preflight, the re-plan with its index, the headers asked, then reboot required",
          "[apply][sequence]") {
  Server s;
  auto o = Server::Yes();
  o.callback = kCallback;
  o.lock_timeout = 5;
  auto r = s.Apply(o);
  CHECK(r.outcome == apply::ApplyOutcome::kRebootRequired);
  CHECK(r.exit_code == 3);
  CHECK(r.stack == "test-r535");
  CHECK(s.loads == std::vector<std::string>{""});
  // The stack repository's index read privately first, then the distribution's (the headers), then the
  // plan made with that index: apt waits --lock-timeout for its lock, the pins file is written.
  const auto& calls = s.runner.calls;
  REQUIRE(calls.size() >= 3);
  CHECK(Option(calls[0], "Dir::Etc::SourceList") ==
        s.root.path() + "/var/lib/gpuprep/preflight/sources.list");
  CHECK(Option(calls[1], "Dir::Etc::SourceList") == s.root.path() + "/etc/apt/sources.list");
  CHECK(Option(calls[1], "Dir::State::Lists") == s.root.path() + "/var/lib/gpuprep/preflight-host/lists");
  CHECK(s.Commands() == std::vector<std::string>{"apt-get -q", "apt-get -q", "apt-get -o", "apt-get -y",
                                                 "update-initramfs -u", "apt-mark hold", "systemctl enable",
                                                 "systemctl daemon-reload", "systemctl enable",
                                                 "curl --silent"});
  CHECK(Option(calls[3], "DPkg::Lock::Timeout") == "5");
  CHECK(Has(Join(calls[3].argv, " "), "linux-headers-5.15.0-105-generic cuda-drivers=535.129.03-1"));
  CHECK(Has(s.root.Read("/etc/apt/preferences.d/gpuprep"), "Pin: version 535.129.03-1"));
  CHECK_FALSE(s.root.Exists(apply::kPreflightDir));
  CHECK_FALSE(s.root.Exists(apply::kPreflightHostDir));
  // The verdict: status.json, its POST to the callback, the URL kept for the resumed run, one line said.
  const auto st = s.Status();
  CHECK(st["state"] == "reboot-required");
  CHECK(st["exit_code"] == 3);
  CHECK(st["stack"] == "test-r535");
  CHECK(st["manifest"] == kSpec);
  CHECK(st["started"] == "2026-11-29T12:00:00Z");
  CHECK(st["converged"].is_null());
  CHECK(calls.back().argv.back() == kCallback);
  CHECK(nlohmann::json::parse(*calls.back().stdin_data) == st);
  CHECK(apply::ReadCallback(s.root.fs()) == kCallback);
  REQUIRE(s.said.size() == 1);
  CHECK(s.said[0] == "reboot required: " + r.message);
  CHECK(apply::ReadJournal(s.root.fs())->state == "reboot-required");
  CHECK(s.file_log.empty());
}

TEST_CASE("apply reads the host state again before every re-plan", "[apply][sequence]") {
  Server s;
  std::vector<bool> enabled;  // what each plan saw of nvidia-persistenced's unit
  s.seams.plan = [&s, &enabled](const plan::PlanInput& in) {
    REQUIRE(in.host);
    enabled.push_back(in.host->UnitEnabled("nvidia-persistenced.service"));
    // The host changes after the first plan is made: the re-plan must see it, not the first reading.
    if (enabled.size() == 1)
      s.root.Symlink("/lib/systemd/system/nvidia-persistenced.service",
                     "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service");
    return layers::BuildPlan(in);
  };
  CHECK(s.Apply().exit_code == 3);
  REQUIRE(enabled.size() >= 2);  // the plan, then the re-plan with the repositories' index
  CHECK_FALSE(enabled[0]);
  CHECK(enabled[1]);
}

TEST_CASE("--resume after the reboot: the journal's stack, layers and callback; verified, converged",
          "[apply][sequence]") {
  Server s;
  SECTION("--resume without a journal is a usage error") {
    auto o = Server::Yes();
    o.resume = true;
    CHECK(s.Fails(o) ==
          std::pair<int, std::string>{2, "--resume: no journal at /var/lib/gpuprep/journal.json"});
    CHECK(s.loads.empty());
  }
  SECTION("the resumed run") {
    auto o = Server::Yes();
    o.skip = {"nccl"};
    o.callback = kCallback;
    CHECK(s.Apply(o).exit_code == 3);
    const std::string left =
        "left alone: nccl (not selected: their packages, holds and pins stay as they are)";
    CHECK(s.said.front() == left);
    s.Reboot();
    apply::ApplyOptions resume = Server::Yes();
    resume.resume = true;
    auto r = s.Apply(resume);
    CHECK(r.outcome == apply::ApplyOutcome::kDone);
    CHECK(r.exit_code == 0);
    CHECK(s.loads == std::vector<std::string>{"", kSpec});  // the journal's manifest
    CHECK(s.said == std::vector<std::string>{left, "done: the host matches stack test-r535"});
    // Verified, not installed again; the resume unit goes; the saved callback gets the verdict.
    CHECK_FALSE(s.Ran("apt-get -y"));
    CHECK(s.Ran("systemctl disable gpuprep-resume.service"));
    CHECK_FALSE(s.root.Exists("/etc/systemd/system/gpuprep-resume.service"));
    CHECK(s.runner.calls.back().argv.back() == kCallback);
    CHECK(apply::ReadCallback(s.root.fs()).empty());
    const auto st = s.Status();
    CHECK(st["state"] == "done");
    CHECK(st["converged"]["stack"] == "test-r535");
    CHECK(st["converged"]["manifest"] == kSpec);
    const auto j = apply::ReadJournal(s.root.fs());
    CHECK(j->state == "done");
    CHECK(j->skip == std::vector<std::string>{"nccl"});

    // Converged: the next run has nothing to do and keeps the converged record.
    auto again = Server::Yes();
    again.skip = {"nccl"};
    r = s.Apply(again);
    CHECK(r.outcome == apply::ApplyOutcome::kNothingToDo);
    CHECK(s.said == std::vector<std::string>{left, "nothing to do: the host matches stack test-r535"});
    CHECK(s.runner.calls.empty());
    CHECK(s.Status()["state"] == "nothing-to-do");
    CHECK(s.Status()["converged"]["stack"] == "test-r535");
  }
}

TEST_CASE("the apply lock: a run that finds it held stops before status.json, and the lock is released",
          "[apply][sequence]") {
  Server s;
  SECTION("the seam says held") {
    s.seams.lock = [](sys::Fs&, std::string& why) {
      why = "held by pid 4242";
      return apply::LockHandle();
    };
    CHECK(s.Fails() ==
          std::pair<int, std::string>{
              1, "another gpuprep apply is running (/var/lib/gpuprep/apply.lock held by pid 4242)"});
    CHECK(s.loads == std::vector<std::string>{""});  // the stack loads first: a bad manifest is exit 2
    CHECK(s.runner.calls.empty());
    CHECK_FALSE(s.root.Exists(apply::kStatusPath));
  }
  SECTION("the real lock, held by this process") {
    std::string why;
    auto held = sys::ApplyLock::TryAcquire(s.root.fs(), why);
    REQUIRE(held != nullptr);
    CHECK(s.Fails() == std::pair<int, std::string>{
                           1, "another gpuprep apply is running (/var/lib/gpuprep/apply.lock held by pid " +
                                  std::to_string(::getpid()) + ")"});
    CHECK_FALSE(s.root.Exists(apply::kStatusPath));
    held.reset();
    CHECK(s.Apply().exit_code == 3);
    CHECK(sys::ApplyLock::TryAcquire(s.root.fs(), why) != nullptr);  // released when the run ended
  }
}

TEST_CASE("the running kernel's headers gone from the distribution: refused before any change",
          "[apply][sequence]") {
  Server s;
  s.headers_published = false;
  auto o = Server::Yes();
  o.callback = kCallback;
  const auto [code, message] = s.Fails(o);
  CHECK(code == 1);
  CHECK(StartsWith(message, "refused before any change: "));
  CHECK(Has(message, "linux-headers-5.15.0-105-generic"));
  CHECK(s.Commands() == std::vector<std::string>{"apt-get -q", "apt-get -q", "curl --silent"});
  CHECK_FALSE(s.root.Exists(kCuda));
  const auto st = s.Status();
  CHECK(st["state"] == "refused");
  CHECK(st["exit_code"] == 1);
  CHECK(st["message"] == message);
  CHECK_FALSE(st["layers"].empty());
  CHECK(s.file_log == std::vector<std::string>{message});
}

TEST_CASE("the repositories' index cannot be read: refused, nothing changed", "[apply][sequence]") {
  Server s;
  s.runner.rules.insert(s.runner.rules.begin(),
                        {"apt-get -q", test::Exit(100, "", "E: The repository is not signed."), -1, nullptr});
  const auto [code, message] = s.Fails();
  CHECK(code == 1);
  CHECK(message ==
        "apt-get update of the stack's repositories failed: E: The repository is not signed.; nothing was "
        "changed");
  CHECK(s.Commands() == std::vector<std::string>{"apt-get -q"});
  CHECK_FALSE(s.root.Exists(kCuda));
  CHECK(s.Status()["state"] == "refused");
  CHECK(s.Status()["layers"].empty());
  CHECK(s.file_log == std::vector<std::string>{message});
}

TEST_CASE("a failing step stops the sequence and records the failure", "[apply][sequence]") {
  Server s;
  s.runner.rules.insert(
      s.runner.rules.begin(),
      {"apt-get -y", test::Exit(100, "", "E: Sub-process /usr/bin/dpkg returned an error code (1)"), -1,
       nullptr});
  auto o = Server::Yes();
  o.callback = kCallback;
  const auto [code, message] = s.Fails(o);
  CHECK(code == 1);
  CHECK(StartsWith(message, "apt.install: apt-get -y "));
  CHECK(EndsWith(message, "exited with 100: E: Sub-process /usr/bin/dpkg returned an error code (1)"));
  // No step after the install; the verdict recorded and sent; no callback kept for a resume.
  CHECK(s.Commands() ==
        std::vector<std::string>{"apt-get -q", "apt-get -q", "apt-get -o", "apt-get -y", "curl --silent"});
  const auto st = s.Status();
  CHECK(st["state"] == "failed");
  CHECK(st["exit_code"] == 1);
  CHECK(st["message"] == message);
  CHECK(apply::ReadCallback(s.root.fs()).empty());
  CHECK(apply::ReadJournal(s.root.fs())->state == "failed");
  CHECK(s.file_log == std::vector<std::string>{message});
  CHECK(s.said.empty());
}
