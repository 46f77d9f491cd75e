// From R590 on NVIDIA's CUDA repository publishes the driver packages without the branch in their names and
// apt installs the newest driver unless a version-locking package says otherwise (NVIDIA's Driver
// Installation Guide: "Recent updates", "Ubuntu 590 and later packages"; "Version locking"). The plan
// names the packages as the index publishes them, pins and holds every one at the stack's release (not the
// newer point releases beside it), adds the branch's locking package, never pins the kernel's packages, and
// removes the locking package of another branch on a stack switch.
#include <algorithm>
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "layers/plan.h"
#include "plan/plan_queries.h"
#include "plan/planner.h"
#include "support/plan_host.h"
#include "sys/process.h"

using namespace gp;
using gp::test::Find;
using gp::test::Layer;
using gp::test::TempRoot;

namespace {

// The R590+ repository's shape, three point releases of branch 595 (the revisions NVIDIA's repository
// carries for them end in -1ubuntu1). The driver packages' names are the guide's renames (nvidia-dkms-open,
// libnvidia-compute...); `nvidia-open` depends on `nvidia-driver-open` without a version, as `apt-cache
// show` prints it from NVIDIA's repository. The locking package's control fields as `apt-cache show
// nvidia-driver-pinning-580` prints them there (Section: NVIDIA; Provides, Conflicts and Replaces
// nvidia-driver-pinning: one locking package at a time).
std::string R595Packages() {
  std::string out;
  for (const std::string up : {"595.45.04", "595.71.05", "595.91.07"}) {
    const std::string v = up + "-1ubuntu1";
    auto stanza = [&](const std::string& name, const std::string& fields) {
      out += "Package: " + name + "\nVersion: " + v + "\nArchitecture: amd64\n" + fields + "Filename: ./" +
             name + "_" + v + "_amd64.deb\n\n";
    };
    stanza("nvidia-open", "Depends: nvidia-driver-open\n");
    stanza("nvidia-driver-open",
           "Depends: nvidia-dkms-open (>= " + up + "), libnvidia-compute (>= " + up + ")\n");
    stanza("nvidia-dkms-open", "Depends: dkms, nvidia-kernel-common (>= " + up + ")\n");
    stanza("nvidia-kernel-common", "");
    stanza("libnvidia-compute", "");
    stanza("nvidia-driver-pinning-595",
           "Section: NVIDIA\nProvides: nvidia-driver-pinning\nConflicts: nvidia-driver-pinning\n"
           "Replaces: nvidia-driver-pinning\n");
  }
  return out;
}

manifest::Stack R595Stack() {
  manifest::Stack s = test::TestStack();
  s.name = "test-r595";
  s.driver.branch = 595;
  s.driver.version = test::Pin("595.71.05");
  s.driver.packages = {{"nvidia-open-595", "", ""}};  // as an R580 stack writes it; the index decides
  s.driver.fabricmanager_packages.clear();
  s.repositories[0].keyring_sha256 = std::string(64, 'a');
  return s;
}

struct R595Plan {
  TempRoot root;
  manifest::Stack stack = R595Stack();
  probe::HostFacts facts = test::BareHost();
  plan::PlanInput in;
  apt::Index index;
  R595Plan() {
    in.stack = &stack;
    in.facts = &facts;
  }
  plan::Plan Offline() { return test::PlanHost(in, root.fs()); }
  plan::Plan Resolved(const std::string& driver_packages = R595Packages()) {
    manifest::Stack libraries = stack;
    libraries.driver.packages.clear();
    index = apt::Index();
    apt::ParsePackages(driver_packages + test::RepoPackages(libraries), "amd64", index);
    in.index = &index;
    auto p = test::PlanHost(in, root.fs());
    in.index = nullptr;
    return p;
  }
};

std::string InstallLine(const plan::Plan& p) {
  const auto* install = Find(p, "apt.install");
  REQUIRE(install);
  return sys::ShellJoin(install->actions[0].argv);
}

std::string Pinned(const plan::Plan& p, const std::string& name) {
  for (const auto& [n, v] : p.pins)
    if (n == name) return v;
  return "";
}

}  // namespace

TEST_CASE("R590+: the unbranched names at the stack's release, pinned and held with the locking package",
          "[plan]") {
  R595Plan f;
  auto offline = f.Offline();
  CHECK(offline.needs_index);  // no index yet: the branch decides the name
  REQUIRE(Find(offline, "apt.install"));
  const auto& argv = Find(offline, "apt.install")->actions[0].argv;
  CHECK(std::find(argv.begin(), argv.end(), "nvidia-open=595.71.05-*") != argv.end());

  auto p = f.Resolved();
  CHECK_FALSE(p.needs_index);
  CHECK(p.blockers.empty());
  CHECK(
      InstallLine(p) ==
      "apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "
      "-o DPkg::Lock::Timeout=600 install -- linux-headers-5.15.0-105-generic nvidia-open=595.71.05-1ubuntu1 "
      "nvidia-driver-pinning-595=595.71.05-1ubuntu1 cuda-toolkit-12-2=12.2.2-1 libcudnn8=8.9.7.29-1+cuda12.2 "
      "libnccl2=2.18.5-1+cuda12.2 libnccl-dev=2.18.5-1+cuda12.2 libnvidia-compute=595.71.05-1ubuntu1 "
      "nvidia-dkms-open=595.71.05-1ubuntu1 nvidia-driver-open=595.71.05-1ubuntu1 "
      "nvidia-kernel-common=595.71.05-1ubuntu1");
  // Every driver package of the closure at the stack's release, not the newer 595.91.07 beside it.
  for (const char* name : {"nvidia-open", "nvidia-driver-open", "nvidia-dkms-open", "nvidia-kernel-common",
                           "libnvidia-compute", "nvidia-driver-pinning-595"})
    CHECK(Pinned(p, name) == "595.71.05-1ubuntu1");
  CHECK(Pinned(p, "nvidia-open-595").empty());
  // The kernel's headers are installed but never pinned or held: DKMS needs the next kernel's.
  CHECK(p.kernel_packages == std::vector<std::string>{"linux-headers-5.15.0-105-generic"});
  for (const auto& [name, version] : p.pins) CHECK(name.rfind("linux-", 0) != 0);
  CHECK(
      sys::ShellJoin(Find(p, "apt.hold")->actions[0].argv) ==
      "apt-mark hold -- cuda-toolkit-12-2 libcudnn8 libnccl-dev libnccl2 libnvidia-compute nvidia-dkms-open "
      "nvidia-driver-open nvidia-driver-pinning-595 nvidia-kernel-common nvidia-open");
  CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kInstall);
}

TEST_CASE("R590+: a repository without the locking package at the stack's release gets gpuprep's pins alone",
          "[plan]") {
  R595Plan f;
  std::string packages = R595Packages();
  // Only the newest release's locking package.
  std::string kept;
  size_t at = 0;
  while (at < packages.size()) {
    size_t end = packages.find("\n\n", at);
    const std::string one = packages.substr(at, end + 2 - at);
    const bool drop = one.find("Package: nvidia-driver-pinning-595\n") != std::string::npos &&
                      one.find("Version: 595.91.07") == std::string::npos;
    if (!drop) kept += one;
    at = end + 2;
  }
  auto p = f.Resolved(kept);
  CHECK(p.blockers.empty());
  CHECK(Pinned(p, "nvidia-driver-pinning-595").empty());
  CHECK(InstallLine(p).find("nvidia-driver-pinning") == std::string::npos);
  CHECK(Pinned(p, "nvidia-open") == "595.71.05-1ubuntu1");
}

TEST_CASE("R590+: where the index publishes the branch-suffixed name, that one is installed", "[plan]") {
  R595Plan f;
  std::string packages = R595Packages();
  packages +=
      "Package: nvidia-open-595\nVersion: 595.71.05-0ubuntu0.22.04.1\nArchitecture: amd64\n"
      "Filename: ./nvidia-open-595.deb\n\n";
  auto p = f.Resolved(packages);
  CHECK(Pinned(p, "nvidia-open-595") == "595.71.05-0ubuntu0.22.04.1");
  CHECK(Pinned(p, "nvidia-open").empty());
}

TEST_CASE("below R590 the names stay branch-suffixed and no locking package is added", "[plan]") {
  R595Plan f;
  f.stack.name = "test-r580";
  f.stack.driver.branch = 580;
  f.stack.driver.version = test::Pin("580.95.05");
  f.stack.driver.packages = {{"nvidia-driver-580-open", "", ""}};
  std::string packages;
  for (const std::string name : {"nvidia-driver-580-open", "nvidia-driver-open", "nvidia-driver-pinning-580"})
    packages += "Package: " + name + "\nVersion: 580.95.05-0ubuntu1\nArchitecture: amd64\nFilename: ./" +
                name + ".deb\n\n";
  auto p = f.Resolved(packages);
  CHECK(p.blockers.empty());
  CHECK(Pinned(p, "nvidia-driver-580-open") == "580.95.05-0ubuntu1");
  CHECK(Pinned(p, "nvidia-driver-open").empty());
  CHECK(Pinned(p, "nvidia-driver-pinning-580").empty());
}

TEST_CASE("a stack switch removes the locking package of the old branch and releases its pin and hold",
          "[plan]") {
  R595Plan f;
  f.stack = test::TestStack();  // R535
  f.stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  f.root.Write("/var/lib/dpkg/status", test::DpkgStanza("nvidia-driver-pinning-595", "595.71.05-1ubuntu1"));
  f.root.Write(apt::kPreferencesPath,
               apt::PreferencesContents("test-r595",
                                        {{"nvidia-driver-pinning-595", {"595.71.05-1ubuntu1", {"driver"}}}}));
  auto p = f.Resolved(test::RepoPackages(f.stack));
  CHECK(p.blockers == std::vector<std::string>{});
  const std::string line = InstallLine(p);
  CHECK(line.size() > 27);
  CHECK(line.substr(line.size() - 27) == " nvidia-driver-pinning-595-");
  CHECK(sys::ShellJoin(Find(p, "apt.unhold")->actions[0].argv) ==
        "apt-mark unhold -- nvidia-driver-pinning-595");
  CHECK(Pinned(p, "nvidia-driver-pinning-595").empty());
  CHECK(Layer(p, "driver")
            .detail.find("remove nvidia-driver-pinning-595 (it locks another driver branch than R535)") !=
        std::string::npos);
}

// A provider's image (or an administrator) held another release's driver packages: apt replaces them for the
// stack's driver, and refuses with -y unless held packages may change. The plan allows it and says which;
// an unrelated held package and one of the stack's own release are left out of it.
TEST_CASE("held driver packages of another release are replaced, and the plan says so", "[plan]") {
  R595Plan f;
  f.root.Write("/var/lib/dpkg/status", test::DpkgStanza("nvidia-driver-580-open", "580.95.05-0ubuntu1") +
                                           test::DpkgStanza("cuda-drivers-580", "580.95.05-1") +
                                           test::DpkgStanza("nvidia-container-toolkit", "1.17.8-1") +
                                           test::DpkgStanza("libnvidia-compute-595", "595.71.05-1ubuntu1"));
  auto p = f.Resolved();
  CHECK(p.blockers == std::vector<std::string>{});
  const std::string line = InstallLine(p);
  CHECK(line.find("--allow-change-held-packages") != std::string::npos);
  CHECK(Layer(p, "driver")
            .detail.find("replace cuda-drivers-580, nvidia-driver-580-open (another driver release, held "
                         "outside gpuprep)") != std::string::npos);

  R595Plan unheld;  // the same packages not held: nothing to allow, nothing said
  unheld.root.Write("/var/lib/dpkg/status",
                    test::DpkgStanza("nvidia-driver-580-open", "580.95.05-0ubuntu1", false) +
                        test::DpkgStanza("cuda-drivers-580", "580.95.05-1", false));
  auto q = unheld.Resolved();
  CHECK(InstallLine(q).find("--allow-change-held-packages") == std::string::npos);
  CHECK(Layer(q, "driver").detail.find("held outside gpuprep") == std::string::npos);
}
