// The driver's plan for the kernels to come, where DKMS builds the driver: the headers meta of the installed
// kernel meta (never pinned or held; from the meta, not uname), and an installed kernel without an nvidia
// module given its headers and a DKMS build after the install.
#include <algorithm>
#include <catch2/catch.hpp>

#include "plan/plan_queries.h"
#include "plan/planner_fixture.h"
#include "sys/process.h"

using namespace gp;
using gp::test::Find;
using gp::test::Ids;
using gp::test::Layer;
using gp::test::PlannerFixture;

namespace {

const char* const kMetaJammyUpdates =
    "/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy-updates_main_binary-amd64_Packages";

// Ubuntu 22.04's archive as apt keeps it: both series' headers metas and the kernels' own headers.
std::string MetaJammyPackages() {
  std::string out;
  for (const char* name :
       {"linux-headers-generic", "linux-headers-generic-hwe-22.04", "linux-headers-6.8.0-60-generic",
        "linux-headers-6.8.0-62-generic", "linux-headers-5.15.0-105-generic"})
    out += std::string("Package: ") + name +
           "\nArchitecture: amd64\nVersion: 6.8.0-62.63~22.04.1\nPriority: optional\n"
           "Section: kernel\nSource: linux-meta-hwe-6.8\nFilename: pool/main/l/" +
           name + ".deb\n\n";
  return out;
}

// The apt-get install words of plan `p` ("" when it installs nothing).
std::vector<std::string> MetaInstallWords(const plan::Plan& p) {
  const plan::Step* s = Find(p, "apt.install");
  if (!s) return {};
  const auto& argv = s->actions.at(0).argv;
  auto at = std::find(argv.begin(), argv.end(), "--");
  return {at + 1, argv.end()};
}

bool MetaPinned(const plan::Plan& p, const std::string& name) {
  return std::any_of(p.pins.begin(), p.pins.end(), [&](const auto& pin) { return pin.first == name; });
}

// A converged 22.04 host on its HWE kernel (6.8), the driver built by DKMS.
void MetaHweHost(PlannerFixture& f) {
  f.Converge();
  f.facts.kernel = "6.8.0-60-generic";
  f.facts.driver.dkms_module = true;
  f.facts.kernel_metas = {"linux-image-generic-hwe-22.04"};
}

}  // namespace

TEST_CASE("plan: the installed kernel meta's headers meta, unpinned and unheld", "[plan][kernels]") {
  PlannerFixture f;
  MetaHweHost(f);
  f.root.Write(kMetaJammyUpdates, MetaJammyPackages());
  const plan::Plan p = f.Build();
  CHECK(p.blockers.empty());
  // linux-headers-generic would follow the 5.15 series: the HWE meta's own headers meta is the one.
  CHECK(MetaInstallWords(p) == std::vector<std::string>{"linux-headers-generic-hwe-22.04"});
  CHECK(p.kernel_packages == std::vector<std::string>{"linux-headers-generic-hwe-22.04"});
  CHECK(Ids(p) == std::vector<std::string>{"apt.update", "apt.install", "verify.driver"});
  CHECK_FALSE(MetaPinned(p, "linux-headers-generic-hwe-22.04"));
  CHECK_FALSE(p.reboot);
  CHECK(Layer(p, "driver").kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Layer(p, "driver").detail == "headers for future kernels: linux-headers-generic-hwe-22.04");
}

TEST_CASE("plan: no headers meta where the meta has one, the lists lack it, or DKMS is not used",
          "[plan][kernels]") {
  PlannerFixture f;
  MetaHweHost(f);
  SECTION("installed already") {
    f.root.Write(kMetaJammyUpdates, MetaJammyPackages());
    f.facts.kernel_metas.push_back("linux-headers-generic-hwe-22.04");
    CHECK(Ids(f.Build()).empty());
  }
  SECTION("not published by the host's lists, or by the index apply fetched just now") {
    f.root.Write(kMetaJammyUpdates, "Package: linux-headers-5.15.0-105-generic\nVersion: 5.15.0-105.115\n\n");
    CHECK(Ids(f.Build()).empty());
    std::map<std::string, apt::ListsAnswer> answers;
    answers["linux-headers-generic-hwe-22.04"] = {apt::Availability::kMissing, "the index fetched just now"};
    f.in.kernel_packages = &answers;
    CHECK(Ids(f.Build()).empty());
    CHECK(Layer(f.Build(), "driver").kind == plan::LayerDecision::Kind::kNone);
  }
  SECTION("prebuilt signed modules") {
    f.root.Write(kMetaJammyUpdates, MetaJammyPackages());
    f.stack.driver.signed_modules = true;
    f.facts.driver.dkms_module = false;
    CHECK(Ids(f.Build()).empty());
  }
  SECTION("a release's own image is no meta") {
    f.root.Write(kMetaJammyUpdates, MetaJammyPackages());
    f.facts.kernel_metas = {"linux-image-unsigned-6.8.0-60-generic"};
    CHECK(Ids(f.Build()).empty());
  }
}

TEST_CASE("plan: an installed kernel without a module gets its headers, then a DKMS build",
          "[plan][kernels]") {
  PlannerFixture f;
  MetaHweHost(f);
  f.facts.kernel_metas.push_back("linux-headers-generic-hwe-22.04");
  f.root.Write(kMetaJammyUpdates, MetaJammyPackages());
  probe::InstalledKernel running;
  running.release = "6.8.0-60-generic";
  running.modules_dep = running.headers = true;
  running.module_path = "updates/dkms/nvidia.ko.zst";
  probe::InstalledKernel next;
  next.release = "6.8.0-62-generic";
  next.modules_dep = true;
  f.facts.boot.probed = true;
  f.facts.boot.kernels = {running, next};
  SECTION("no headers: installed, then DKMS builds after the install") {
    const plan::Plan p = f.Build();
    CHECK(MetaInstallWords(p) == std::vector<std::string>{"linux-headers-6.8.0-62-generic"});
    CHECK(Ids(p) == std::vector<std::string>{"apt.update", "apt.install", "driver.dkms.6.8.0-62-generic",
                                             "verify.driver"});
    CHECK(sys::ShellJoin(Find(p, "driver.dkms.6.8.0-62-generic")->actions.at(0).argv) ==
          "dkms autoinstall -k 6.8.0-62-generic");
    CHECK_FALSE(MetaPinned(p, "linux-headers-6.8.0-62-generic"));
    CHECK(Layer(p, "driver").detail == "nvidia module for installed kernel 6.8.0-62-generic");
  }
  SECTION("headers there: only the build") {
    f.facts.boot.kernels[1].headers = true;
    CHECK(Ids(f.Build()) == std::vector<std::string>{"driver.dkms.6.8.0-62-generic", "verify.driver"});
  }
  SECTION("a build DKMS tried and failed is left to doctor's finding") {
    f.facts.boot.kernels[1].headers = true;
    f.facts.boot.kernels[1].dkms_log = "/var/lib/dkms/nvidia/535.129.03/6.8.0-62-generic/x86_64/log/make.log";
    CHECK(Ids(f.Build()).empty());
  }
  SECTION("the lists do not publish its headers: no build is planned") {
    f.root.Write(kMetaJammyUpdates, "Package: linux-headers-5.15.0-105-generic\nVersion: 5.15.0-105.115\n\n");
    CHECK(Ids(f.Build()).empty());
  }
}
