// The fabricmanager layer's plan and verify on HGX Blackwell (the fixture hosts hgx-b200 and gb200-tray):
// Fabric Manager at the driver's version, NVLSM at the stack's own pin beside it, ib_umad loaded at every
// boot (from the kernel's extra modules when it has none); a stack without NVLSM, or a distribution without
// the extra modules, refuses the layer before any change.
#include <algorithm>
#include <catch2/catch.hpp>

#include "host/files.h"
#include "layers/fabricmanager/fabricmanager.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "support/plan_host.h"
#include "sys/fs.h"
#include "util/strings.h"
#include "util/version.h"

using namespace gp;

namespace {

struct Host {
  sys::DiskFs fs;
  probe::HostFacts facts;
  manifest::Stack stack = manifest::LoadStack("blackwell-r580-cuda13.0", manifest::LoadContext{});
  explicit Host(const std::string& name) : fs(std::string(GP_FIXTURES) + "/hosts/" + name) {
    probe::ProbeEnv env;
    env.fs = &fs;
    env.compat = &manifest::EmbeddedCompat();
    facts = probe::ProbeHost(env);
  }
  plan::Plan Plan() {
    plan::PlanInput in;
    in.stack = &stack;
    in.facts = &facts;
    return test::PlanHost(in, fs);
  }
};

const plan::LayerDecision& Fm(const plan::Plan& p) {
  for (const auto& l : p.layers)
    if (l.name == "fabricmanager") return l;
  FAIL("no fabricmanager layer");
  return p.layers.front();
}

std::vector<std::string> InstallWords(const plan::Plan& p) {
  for (const auto& s : p.steps)
    if (s.id == "apt.install") return s.actions.at(0).argv;
  return {};
}

bool HasWord(const std::vector<std::string>& words, const std::string& prefix) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return StartsWith(w, prefix); });
}

bool HasStep(const plan::Plan& p, const std::string& id) {
  return std::any_of(p.steps.begin(), p.steps.end(), [&](const plan::Step& s) { return s.id == id; });
}

}  // namespace

TEST_CASE("fabricmanager plan on HGX Blackwell: planned, not 'no NVSwitch'", "[layers][fabric][plan]") {
  Host h("hgx-b200");
  REQUIRE(h.facts.nvswitch_count == 0);
  REQUIRE(layers::HgxBlackwell(h.facts));
  CHECK(layers::NeedsFabricManager(h.facts));
  // The fixture has Fabric Manager and NVLSM installed, ib_umad in the kernel's tree but not loaded: the plan
  // loads it now and at every boot, and verifies the layer.
  const plan::Plan p = h.Plan();
  CHECK(Fm(p).kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Fm(p).detail.find("ib_umad not loaded") != std::string::npos);
  REQUIRE(HasStep(p, "fabricmanager.ib-umad"));
  CHECK(HasStep(p, "verify.fabricmanager"));
  const std::vector<std::string> defaults = layers::DefaultVerifyLayers(h.stack, h.facts);
  CHECK(std::find(defaults.begin(), defaults.end(), "fabricmanager") != defaults.end());
}

TEST_CASE("fabricmanager plan on HGX Blackwell: NVLSM neither installed nor pinned refuses the layer",
          "[layers][fabric][plan]") {
  Host h("hgx-b200");
  h.facts.fabric.nvlsm = {};
  const plan::Plan p = h.Plan();
  CHECK(Fm(p).kind == plan::LayerDecision::Kind::kRefused);
  CHECK(Fm(p).detail.find("pins no nvlsm package") != std::string::npos);
  CHECK(Fm(p).detail.find("move to") == std::string::npos);  // no embedded stack succeeds this one
  // The stack with the same pins as the NVLSM stack's predecessor: the refusal names its successor.
  h.stack = manifest::LoadStack("blackwell-r580.173.02-cuda13.0.3", manifest::LoadContext{});
  CHECK(Fm(h.Plan()).detail.find(
            "move to blackwell-r580.173.02-cuda13.0.3-nvlsm, the same pins with NVLSM") != std::string::npos);
  h.stack = manifest::LoadStack("blackwell-r580-cuda13.0", manifest::LoadContext{});
  CHECK(std::any_of(p.blockers.begin(), p.blockers.end(),
                    [](const std::string& b) { return StartsWith(b, "fabricmanager: "); }));

  // Pinned by a site file (at another version than the fixture's 2025.06.10-1): NVLSM joins the fabric
  // manager's packages at its own version, the others still at the driver's.
  h.stack.driver.fabricmanager_packages.push_back({"nvlsm", "2025.06.11-1", ""});
  const plan::Plan pinned = h.Plan();
  INFO(Fm(pinned).detail);
  CHECK(Fm(pinned).kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Fm(pinned).detail.find("nvlsm") != std::string::npos);
  CHECK(HasWord(InstallWords(pinned), "nvlsm=2025.06.11"));
  CHECK(std::none_of(pinned.blockers.begin(), pinned.blockers.end(),
                     [](const std::string& b) { return StartsWith(b, "fabricmanager: "); }));
}

TEST_CASE("fabricmanager plan on HGX Blackwell: a kernel without ib_umad gets its extra modules, unpinned",
          "[layers][fabric][plan]") {
  Host h("hgx-b200");
  h.facts.fabric.ib_umad_available = false;
  h.facts.fabric.ib_umad_loaded = false;
  const std::string extra = "linux-modules-extra-6.8.0-60-generic";
  // The host's lists cannot tell: installed by name in the transaction, asked of the sources before any
  // change.
  const plan::Plan p = h.Plan();
  INFO(Fm(p).detail);
  CHECK(Fm(p).kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Fm(p).detail.find("ib_umad from " + extra) != std::string::npos);
  const std::vector<std::string> words = InstallWords(p);
  CHECK(std::find(words.begin(), words.end(), extra) != words.end());
  CHECK(std::find(p.kernel_packages.begin(), p.kernel_packages.end(), extra) != p.kernel_packages.end());
  CHECK(std::none_of(p.pins.begin(), p.pins.end(),
                     [](const auto& pin) { return StartsWith(pin.first, "linux-"); }));
  CHECK(HasStep(p, "fabricmanager.ib-umad"));
  // The distribution does not publish it (apply's answer from the host's sources): refused before any change.
  std::map<std::string, apt::ListsAnswer> answers;
  answers[extra] = {apt::Availability::kMissing, "the index fetched just now"};
  plan::PlanInput in;
  in.stack = &h.stack;
  in.facts = &h.facts;
  in.kernel_packages = &answers;
  const plan::Plan refused = test::PlanHost(in, h.fs);
  CHECK(Fm(refused).kind == plan::LayerDecision::Kind::kRefused);
  CHECK(Fm(refused).detail.find(extra + " is not in the index fetched just now") != std::string::npos);
  const std::vector<std::string> none = InstallWords(refused);
  CHECK(std::find(none.begin(), none.end(), extra) == none.end());
  h.facts.kernel = "6.8.0;rm -rf /";  // outside input: never named as a package
  const std::string detail = Fm(h.Plan()).detail;
  CHECK(detail.find("rm -rf") == std::string::npos);
  CHECK(detail.find("linux-modules-extra-$(uname -r)") != std::string::npos);
}

TEST_CASE(
    "fabricmanager plan on HGX Blackwell: ib_umad listed for every boot even when loaded now, then "
    "Fabric Manager restarted where the driver stays",
    "[layers][fabric][plan]") {
  Host h("hgx-b200");  // its driver 580.95.05 runs: blackwell-r580-cuda13.0 keeps it, so no reboot follows
  h.facts.fabric.ib_umad_loaded = true;  // loaded by hand (modprobe), never listed for boot
  plan::PlanInput in;
  in.stack = &h.stack;
  in.facts = &h.facts;
  plan::HostState host = host::ReadFiles(h.fs, h.stack, h.facts, layers::HostReads(h.stack, h.facts));
  in.host = &host;
  auto step = [](const plan::Plan& p, const std::string& id) -> const plan::Step* {
    for (const auto& s : p.steps)
      if (s.id == id) return &s;
    return nullptr;
  };
  plan::Plan p = layers::BuildPlan(in);
  const plan::Step* umad = step(p, "fabricmanager.ib-umad");
  REQUIRE(umad != nullptr);
  REQUIRE(umad->actions.size() == 1);  // the boot entry only: it is loaded already
  CHECK(umad->actions[0].path == layers::kIbUmadModulesLoad);
  CHECK(Fm(p).detail.find("ib_umad not listed for boot") != std::string::npos);
  // Fabric Manager reads NVLSM and ib_umad when it starts: restarted, after the layer's other steps.
  const plan::Step* restart = step(p, "fabricmanager.restart");
  REQUIRE(restart != nullptr);
  CHECK(restart->actions.at(0).argv ==
        std::vector<std::string>{"systemctl", "restart", "nvidia-fabricmanager.service"});
  // Listed and loaded, the rest as it is: nothing to do for ib_umad.
  host.files[layers::kIbUmadModulesLoad] = "ib_umad\n";
  p = layers::BuildPlan(in);
  CHECK(step(p, "fabricmanager.ib-umad") == nullptr);
  // A driver that changes (a reboot follows, and starts Fabric Manager then): no restart.
  h.stack = manifest::LoadStack("blackwell-r580.173.02-cuda13.0.3-nvlsm", manifest::LoadContext{});
  host = host::ReadFiles(h.fs, h.stack, h.facts, layers::HostReads(h.stack, h.facts));
  p = layers::BuildPlan(in);
  CHECK(Fm(p).kind == plan::LayerDecision::Kind::kInstall);
  CHECK(step(p, "fabricmanager.restart") == nullptr);
}

TEST_CASE("fabricmanager plan on HGX Blackwell: the shipped NVLSM stack pins NVLSM, the umad library by name",
          "[layers][fabric][plan]") {
  Host h("hgx-b200");
  h.stack = manifest::LoadStack("blackwell-r580.173.02-cuda13.0.3-nvlsm", manifest::LoadContext{});
  CHECK(layers::NvlsmPin(h.stack) == "2025.06.11");
  const plan::Plan p = h.Plan();
  INFO(Fm(p).detail);
  const std::vector<std::string> words = InstallWords(p);
  CHECK(HasWord(words, "nvlsm=2025.06.11"));
  CHECK(std::find(words.begin(), words.end(), "libibumad3") != words.end());
  // On an NVSwitch host the fabric packages are not needed: exactly what the predecessor installs.
  h.facts.fabric = {};
  h.facts.nvswitch_count = 4;
  const std::vector<std::string> hopper = InstallWords(h.Plan());
  CHECK_FALSE(HasWord(hopper, "nvlsm"));
  CHECK_FALSE(HasWord(hopper, "libibumad3"));
}

TEST_CASE("HGX B200 needs driver 570.133.20 or later", "[layers][fabric][plan]") {
  Host h("hgx-b200");
  CHECK(layers::PlatformDriverProblem(h.facts, *Version::Parse("570.133.20")).empty());
  CHECK(layers::PlatformDriverProblem(h.facts, *Version::Parse("580.95.05")).empty());
  const std::string why = layers::PlatformDriverProblem(h.facts, *Version::Parse("570.124.06"));
  CHECK(why.find("570.133.20") != std::string::npos);
  // Not an HGX Blackwell board (a B200 without the bridges): no platform minimum.
  probe::HostFacts plain = h.facts;
  plain.fabric = {};
  CHECK(layers::PlatformDriverProblem(plain, *Version::Parse("570.124.06")).empty());
  // A stack with an older driver is refused on the host before any change.
  h.stack.driver.branch = 570;
  h.stack.driver.version.version = Version::Parse("570.124.06");
  const plan::Plan p = h.Plan();
  REQUIRE_FALSE(p.blockers.empty());
  CHECK(Join(p.blockers, "; ").find("HGX B200 needs driver 570.133.20 or later") != std::string::npos);
}

TEST_CASE("fabricmanager on other hosts: a tray is not applicable, NVSwitch hosts never install NVLSM",
          "[layers][fabric][plan]") {
  Host tray("gb200-tray");
  CHECK_FALSE(layers::NeedsFabricManager(tray.facts));
  CHECK(Fm(tray.Plan()).kind == plan::LayerDecision::Kind::kNotApplicable);
  Host hopper("hgx-b200");
  hopper.facts.fabric = {};
  hopper.facts.nvswitch_count = 4;
  hopper.stack.driver.fabricmanager_packages.push_back({"nvlsm", "2025.06.10-1", ""});
  hopper.facts.fabricmanager = {};
  const plan::Plan p = hopper.Plan();
  CHECK_FALSE(HasWord(InstallWords(p), "nvlsm"));
  // verify on a host without a fabric: skipped.
  apply::VerifyEnv env{&tray.fs, nullptr, &tray.stack, &tray.facts, nullptr};
  const verdict::LayerReport r = layers::VerifyLayer("fabricmanager", env);
  CHECK(r.status == verdict::Status::kSkip);
}
