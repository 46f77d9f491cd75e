#include "plan/planner.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "layers/plan.h"
#include "plan/plan_queries.h"
#include "plan/planner_fixture.h"
#include "support/plan_host.h"
#include "sys/process.h"
#include "util/error.h"
#include "util/strings.h"

using namespace gp;
using gp::test::Find;
using gp::test::Ids;
using gp::test::Layer;
using gp::test::PlannerFixture;
using gp::test::TempRoot;

TEST_CASE("a bare host plans keys, lists, nouveau, one pinned apt transaction, holds, reboot check, verify",
          "[plan]") {
  PlannerFixture f;
  auto offline = f.BuildOffline();
  CHECK(offline.needs_index);  // no lists yet: exact revisions are resolved at apply time
  CHECK(offline.resolved_from.empty());
  auto p = f.BuildResolved();
  CHECK_FALSE(p.needs_index);
  CHECK(Ids(p) == std::vector<std::string>{"repo.cuda.key", "repo.cuda.list", "apt.update", "apt.pin",
                                           "apt.install", "driver.nouveau", "apt.hold", "driver.persistenced",
                                           "reboot.check", "verify.driver", "verify.cuda", "verify.cudnn",
                                           "verify.nccl"});
  const auto* install = Find(p, "apt.install");
  REQUIRE(install);
  REQUIRE(install->actions.size() == 1);
  CHECK(sys::ShellJoin(install->actions[0].argv) ==
        "apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "
        "-o DPkg::Lock::Timeout=600 install -- linux-headers-5.15.0-105-generic cuda-drivers=535.129.03-1 "
        "cuda-toolkit-12-2=12.2.2-1 libcudnn8=8.9.7.29-1+cuda12.2 libnccl2=2.18.5-1+cuda12.2 "
        "libnccl-dev=2.18.5-1+cuda12.2");
  CHECK(install->actions[0].env == std::map<std::string, std::string>{{"DEBIAN_FRONTEND", "noninteractive"}});
  CHECK(sys::ShellJoin(Find(p, "apt.hold")->actions[0].argv) ==
        "apt-mark hold -- cuda-drivers cuda-toolkit-12-2 libcudnn8 libnccl-dev libnccl2");
  CHECK(sys::ShellJoin(Find(p, "apt.update")->actions[0].argv) ==
        "apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update");
  const auto* list = Find(p, "repo.cuda.list");
  REQUIRE(list->actions.size() == 1);
  CHECK(list->actions[0].contents ==
        "# gpuprep: repository cuda of stack test-r535 (do not edit; gpuprep apply rewrites it)\n"
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://repo.example/cuda/ /\n");
  const auto* nouveau = Find(p, "driver.nouveau");
  CHECK(nouveau->actions[0].path == "/etc/modprobe.d/blacklist-nouveau.conf");
  CHECK(nouveau->actions[0].contents == "blacklist nouveau\noptions nouveau modeset=0\n");
  CHECK(sys::ShellJoin(nouveau->actions[1].argv) == "update-initramfs -u");
  CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Layer(p, "fabricmanager").kind == plan::LayerDecision::Kind::kNotApplicable);
  CHECK(p.blockers.empty());
}

TEST_CASE("a converged host plans nothing", "[plan]") {
  PlannerFixture f;
  f.Converge();
  auto p = f.Build();
  CHECK(Ids(p).empty());
  for (const auto& l : p.layers) {
    INFO(l.name << ": " << l.detail);
    CHECK(
        (l.kind == plan::LayerDecision::Kind::kNone || l.kind == plan::LayerDecision::Kind::kNotApplicable));
  }
  CHECK(Layer(p, "cudnn").found == "8.9.7.29-1+cuda12.2");
}

TEST_CASE("installed but unheld packages are only held; a held package at another pin may change", "[plan]") {
  PlannerFixture f;
  f.Converge();
  std::string s;
  for (const auto& p : f.stack.driver.packages) s += test::DpkgStanza(p.name, p.version);
  s += test::DpkgStanza("cuda-toolkit-12-2", "12.2.2-1");
  s += test::DpkgStanza("libcudnn8", "8.9.5.29-1+cuda12.2", true);  // held at an older pin
  s += test::DpkgStanza("libnccl2", "2.18.5-1+cuda12.2", false);    // right version, not held
  s += test::DpkgStanza("libnccl-dev", "2.18.5-1+cuda12.2", true);
  f.root.Write("/var/lib/dpkg/status", s);
  auto p = f.Build();
  CHECK(Ids(p) ==
        std::vector<std::string>{"apt.update", "apt.install", "apt.hold", "verify.cudnn", "verify.nccl"});
  CHECK(sys::ShellJoin(Find(p, "apt.install")->actions[0].argv) ==
        "apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "
        "-o DPkg::Lock::Timeout=600 --allow-change-held-packages install -- libcudnn8=8.9.7.29-1+cuda12.2");
  CHECK(sys::ShellJoin(Find(p, "apt.hold")->actions[0].argv) == "apt-mark hold -- libcudnn8 libnccl2");
  CHECK(Layer(p, "nccl").detail == "not held: libnccl2");
  CHECK(Layer(p, "cudnn").detail == "missing: libcudnn8=8.9.7.29-1+cuda12.2");
}

TEST_CASE("an unknown pin refuses that layer with the reason; the rest is still planned", "[plan]") {
  PlannerFixture f;
  f.stack.cudnn.version = manifest::Pinned{};
  f.stack.cudnn.version.unknown = true;
  f.stack.cudnn.version.reason = "no NVIDIA source";
  auto p = f.Build();
  CHECK(Layer(p, "cudnn").kind == plan::LayerDecision::Kind::kRefused);
  CHECK(p.Refusals() ==
        std::vector<std::string>{
            "cudnn: the stack's version is unknown (no NVIDIA source); pin one in a site manifest "
            "(extends: test-r535) or run with --skip cudnn"});
  CHECK(Find(p, "apt.install")->actions[0].argv.back() == "libnccl-dev=2.18.5-1+cuda12.2");
  CHECK(Join(Find(p, "apt.install")->actions[0].argv, " ").find("libcudnn8") == std::string::npos);
}

TEST_CASE("--only and --skip select layers; unknown names get did-you-mean", "[plan]") {
  PlannerFixture f;
  f.in.only = {"cudnn"};
  auto p = f.Build();
  const auto& argv = Find(p, "apt.install")->actions[0].argv;
  CHECK(std::vector<std::string>(argv.end() - 3, argv.end()) ==
        std::vector<std::string>{"install", "--", "libcudnn8=8.9.7.29-1+cuda12.2"});
  CHECK(Find(p, "driver.nouveau") == nullptr);
  CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kSkipped);

  f.in.only.clear();
  f.in.skip = {"driver", "cuda"};
  p = f.Build();
  CHECK(Find(p, "reboot.check") == nullptr);
  CHECK(Join(Find(p, "apt.install")->actions[0].argv, " ").find("cuda-drivers") == std::string::npos);

  CHECK(layers::ParseLayerList("--skip", {"cuda,nccl", "driver"}) ==
        std::vector<std::string>{"cuda", "nccl", "driver"});
  try {
    layers::ParseLayerList("--only", {"drivr"});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "--only: unknown layer \"drivr\" (did you mean \"driver\"?)");
    CHECK(e.code() == kExitUsage);
  }
}

TEST_CASE("Secure Boot without signed modules blocks the plan with MOK instructions", "[plan]") {
  PlannerFixture f;
  f.facts.driver.secure_boot = true;
  auto p = f.Build();
  REQUIRE(p.blockers.size() == 1);
  CHECK(StartsWith(p.blockers[0],
                   "Secure Boot is on and stack test-r535 builds unsigned DKMS modules: enrol a "
                   "Machine Owner Key first (sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"));
  // The refused driver changes nothing: its packages are not on the install line, no reboot is planned
  // or checked; the other layers' packages still are.
  CHECK(test::Layer(p, "driver").kind == plan::LayerDecision::Kind::kRefused);
  CHECK_FALSE(p.reboot);
  CHECK(test::Find(p, "reboot.check") == nullptr);
  const plan::Step* install = test::Find(p, "apt.install");
  REQUIRE(install != nullptr);
  const auto& argv = install->actions.at(0).argv;
  CHECK(std::none_of(argv.begin(), argv.end(),
                     [](const std::string& w) { return StartsWith(w, "cuda-drivers"); }));
  CHECK(
      std::any_of(argv.begin(), argv.end(), [](const std::string& w) { return StartsWith(w, "libnccl2="); }));
  for (const auto& pin : p.pins) CHECK(pin.first != "cuda-drivers");
  f.stack.driver.signed_modules = true;
  const plan::Plan signed_plan = f.Build();
  CHECK(signed_plan.blockers.empty());
  CHECK(signed_plan.reboot);
  CHECK(test::Find(signed_plan, "reboot.check") != nullptr);
}

TEST_CASE("a kernel the distribution publishes no headers for blocks the driver install", "[plan]") {
  PlannerFixture f;
  const std::string distro =
      "/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy-updates_main_binary-amd64_Packages";
  const std::string other =
      "Package: linux-headers-5.15.0-126-generic\nVersion: 5.15.0-126.136\nArchitecture: amd64\n\n";
  SECTION("the host's lists carry them: installed first in the transaction") {
    f.root.Write(distro, other + "Package: linux-headers-5.15.0-105-generic\nVersion: 5.15.0-105.115\n\n");
    auto p = f.Build();
    CHECK(p.blockers.empty());
    CHECK(p.kernel_packages == std::vector<std::string>{"linux-headers-5.15.0-105-generic"});
    const auto& argv = Find(p, "apt.install")->actions[0].argv;
    const auto at = std::find(argv.begin(), argv.end(), "install");
    REQUIRE(at + 2 < argv.end());
    CHECK(at[1] == "--");
    CHECK(at[2] == "linux-headers-5.15.0-105-generic");
  }
  SECTION("the host's lists do not (its archive dropped this ABI): refused with the way out") {
    f.root.Write(distro, other);
    auto p = f.Build();
    REQUIRE(p.blockers.size() == 1);
    CHECK(
        p.blockers[0] ==
        "kernel 5.15.0-105-generic has no headers package (linux-headers-5.15.0-105-generic is not in the "
        "host's "
        "apt lists), so DKMS cannot build NVIDIA's module for it: install the distribution's current kernel "
        "(its meta package: linux-generic on Ubuntu, linux-image-amd64 on Debian) and reboot, or install "
        "this "
        "kernel's headers from its provider (/lib/modules/5.15.0-105-generic/build), then run gpuprep apply "
        "again; or leave the driver as it is with --skip driver");
    CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kRefused);
    CHECK(p.kernel_packages.empty());
    // apply's answer, read from the host's sources just now, decides over the host's old lists.
    std::map<std::string, apt::ListsAnswer> answers;
    apt::ListsAnswer& fresh = answers["linux-headers-5.15.0-105-generic"];
    fresh = {apt::Availability::kAvailable, "the index fetched just now"};
    f.in.kernel_packages = &answers;
    CHECK(f.Build().blockers.empty());
    fresh.state = apt::Availability::kUnknown;  // apply before asking: the headers are taken as installable
    CHECK(f.Build().kernel_packages == std::vector<std::string>{"linux-headers-5.15.0-105-generic"});
    fresh.state = apt::Availability::kMissing;
    REQUIRE(f.Build().blockers.size() == 1);
    CHECK(f.Build().blockers[0].find("is not in the index fetched just now") != std::string::npos);
  }
  SECTION("headers already there, or no driver to install: the lists are not asked") {
    f.root.Write(distro, other);
    f.facts.driver.kernel_headers = true;
    CHECK(f.Build().blockers.empty());
    CHECK(f.Build().kernel_packages.empty());
    f.facts.driver.kernel_headers = false;
    f.in.skip = {"driver"};
    CHECK(f.Build().blockers.empty());
  }
  SECTION("a kernel release no package can be named after is refused without reading anything") {
    f.facts.kernel = "6.1.0-Custom";
    auto p = f.Build();
    REQUIRE(p.blockers.size() == 1);
    CHECK(StartsWith(p.blockers[0],
                     "kernel 6.1.0-Custom has no headers package (linux-headers-6.1.0-Custom is not in"));
  }
}

TEST_CASE("NVSwitch hosts get the fabric manager at the driver's version, enabled and held", "[plan]") {
  PlannerFixture f;
  f.facts.nvswitch_count = 4;
  auto p = f.Build();
  CHECK(Join(Find(p, "apt.install")->actions[0].argv, " ").find("nvidia-fabricmanager-535=535.129.03-1") !=
        std::string::npos);
  REQUIRE(Find(p, "fabricmanager.enable"));
  CHECK(sys::ShellJoin(Find(p, "fabricmanager.enable")->actions[0].argv) ==
        "systemctl enable nvidia-fabricmanager.service");
  CHECK(Find(p, "apt.hold")->actions[0].argv.back() == "nvidia-fabricmanager-535");

  f.stack.driver.fabricmanager_packages = {{"nvidia-fabricmanager-535", "535.104.05-1"}};
  p = f.Build();
  CHECK(
      Layer(p, "fabricmanager").detail ==
      "nvidia-fabricmanager-535 535.104.05 does not match driver 535.129.03 (the fabric manager must run at "
      "exactly the driver's version)");
}

TEST_CASE("conflicting lists are moved aside; an interrupted dpkg is repaired first", "[plan]") {
  PlannerFixture f;
  f.root.Write("/etc/apt/sources.list.d/old-cuda.list",
               "deb [signed-by=/etc/apt/trusted.gpg.d/old.gpg] https://repo.example/cuda /\n");
  f.root.Write("/etc/apt/sources.list.d/unrelated.list", "deb http://deb.debian.org/debian bookworm main\n");
  f.root.Write("/var/lib/dpkg/updates/0003", "");
  auto p = f.Build();
  CHECK(Ids(p)[0] == "dpkg.repair");
  CHECK(sys::ShellJoin(Find(p, "dpkg.repair")->actions[0].argv) == "dpkg --configure -a");
  const auto* c = Find(p, "repo.cuda.conflicts");
  REQUIRE(c);
  REQUIRE(c->actions.size() == 1);
  CHECK(c->actions[0].path == "/etc/apt/sources.list.d/old-cuda.list");
  CHECK(c->actions[0].to == "/etc/apt/sources.list.d/old-cuda.list.gpuprep.bak");
}

TEST_CASE("installed driver with the old module still loaded plans only the reboot check", "[plan]") {
  PlannerFixture f;
  f.Converge();
  f.root.Write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n");
  auto p = f.Build();
  CHECK(Ids(p) == std::vector<std::string>{"reboot.check", "verify.driver"});
  CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kReboot);
  CHECK(Layer(p, "driver").detail ==
        "reboot required: driver 535.129.03 is installed but the loaded kernel module is 535.104.05");
}

TEST_CASE("keys pinned by nothing, or fetched over plain http off loopback, block the plan", "[plan]") {
  PlannerFixture f;
  f.stack.repositories[0].keyring_sha256.clear();
  CHECK(f.Build().blockers ==
        std::vector<std::string>{
            "repository cuda: no key_fingerprint or keyring_sha256 pins "
            "https://repo.example/cuda/key.gpg; gpuprep will not install an unpinned key"});
  f.stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  f.stack.repositories[0].keyring_url = "http://mirror.example/key.gpg";
  CHECK(f.Build().blockers.size() == 1);
  f.stack.repositories[0].keyring_url = "http://127.0.0.1:8080/key.gpg";
  CHECK(f.Build().blockers.empty());
  // Loopback is decided on the parsed host: user information or a look-alike name is another host.
  for (const char* other :
       {"http://127.0.0.1@mirror.example/key.gpg", "http://127.mirror.example/key.gpg",
        "http://localhost.mirror.example/key.gpg", "http://[::1]@mirror.example/key.gpg"}) {
    f.stack.repositories[0].keyring_url = other;
    CHECK(f.Build().blockers.size() == 1);
  }
}

TEST_CASE("a driver at the pinned version from other packages is left alone", "[plan]") {
  PlannerFixture f;
  f.Converge();
  f.root.Write("/var/lib/dpkg/status", test::DpkgStanza("nvidia-driver-535", "535.129.03-0ubuntu1") +
                                           test::DpkgStanza("cuda-toolkit-12-2", "12.2.2-1") +
                                           test::DpkgStanza("libcudnn8", "8.9.7.29-1+cuda12.2") +
                                           test::DpkgStanza("libnccl2", "2.18.5-1+cuda12.2") +
                                           test::DpkgStanza("libnccl-dev", "2.18.5-1+cuda12.2"));
  f.root.Write(apt::kPreferencesPath,
               apt::PreferencesContents(f.stack.name, {{"cuda-toolkit-12-2", {"12.2.2-1", {"cuda"}}},
                                                       {"libcudnn8", {"8.9.7.29-1+cuda12.2", {"cudnn"}}},
                                                       {"libnccl-dev", {"2.18.5-1+cuda12.2", {"nccl"}}},
                                                       {"libnccl2", {"2.18.5-1+cuda12.2", {"nccl"}}}}));
  f.facts.driver.userspace_version = "535.129.03";
  auto p = f.Build();
  CHECK(Ids(p).empty());
  CHECK(
      Layer(p, "driver").detail ==
      "driver 535.129.03 is loaded and its libraries match (installed by other packages; left as they are)");
  f.facts.driver.userspace_version =
      "535.104.05";  // libraries of another version: install the pinned packages
  CHECK(Find(f.Build(), "apt.install") != nullptr);
}

TEST_CASE("the pinned driver packages installed but not held are held even when the driver answers",
          "[plan]") {
  PlannerFixture f;
  f.Converge();
  std::string s = test::DpkgStanza("cuda-drivers", "535.129.03-1", false);
  for (const auto* c : {&f.stack.cuda, &f.stack.cudnn, &f.stack.nccl})
    for (const auto& p : c->packages) s += test::DpkgStanza(p.name, p.version);
  f.root.Write("/var/lib/dpkg/status", s);
  f.facts.driver.userspace_version = "535.129.03";
  auto p = f.Build();
  REQUIRE(Find(p, "apt.hold"));
  CHECK(sys::ShellJoin(Find(p, "apt.hold")->actions[0].argv) == "apt-mark hold -- cuda-drivers");
}

TEST_CASE("hosts the stack cannot serve are blocked before any change", "[plan]") {
  PlannerFixture f;
  f.stack.architectures = {"ampere", "hopper"};
  f.facts.gpus[1].architecture = "blackwell";
  f.facts.gpus[1].name = "B200";
  f.facts.gpus[1].device_id = "0x2901";  // the catalogue's rules (compat.yaml driver_rules) decide
  auto p = f.Build();
  CHECK(p.blockers ==
        std::vector<std::string>{
            "GPU 0000:11:00.0 (B200) is blackwell, which stack test-r535 does not support (ampere, "
            "hopper); choose a stack for blackwell GPUs with --manifest"});
  f.stack.architectures.push_back("blackwell");
  CHECK(f.Build().blockers ==
        std::vector<std::string>{
            "GPU 0000:11:00.0 (B200): stack test-r535 (driver 535.129.03, proprietary) cannot "
            "run it: B200 runs only on NVIDIA's open kernel modules; choose another stack with "
            "--manifest"});
  f.stack.driver.flavour = "open";
  CHECK(f.Build().blockers.size() == 1);  // and R535 is below B200's floor, R570
  f.stack.driver.branch = 580;
  f.stack.driver.version.version = gp::Version::Must("580.95.05");
  CHECK(f.Build().blockers.empty());

  PlannerFixture none;
  none.facts.gpus.clear();
  CHECK(
      none.Build().blockers ==
      std::vector<std::string>{"no NVIDIA GPU on this host: stack test-r535 sets up a GPU driver (to install "
                               "only the libraries: --skip driver)"});
  none.in.skip = {"driver"};
  auto libs = none.Build();
  CHECK(libs.blockers.empty());
  CHECK(Find(libs, "apt.install") != nullptr);
}

// A daemon started by hand keeps persistence until the next boot only: running is not enabled, and the plan
// enables the unit (the doctor warning driver.persistenced says the same).
TEST_CASE("plan: nvidia-persistenced running but not enabled is enabled", "[plan]") {
  PlannerFixture f;
  f.facts.driver.persistenced_running = true;
  f.facts.driver.persistenced_enabled = false;
  auto p = f.BuildResolved();
  const auto* step = Find(p, "driver.persistenced");
  REQUIRE(step);
  CHECK(sys::ShellJoin(step->actions[0].argv) == "systemctl enable nvidia-persistenced.service");
}
