// fabricmanager's plan (NVSwitch hosts and HGX Blackwell baseboards): NVIDIA Fabric Manager at exactly the
// driver's version, held and pinned with the driver's transaction, and its unit enabled. On HGX Blackwell
// Fabric Manager also needs NVLSM, at the version the stack pins (an `nvlsm` entry among the driver's fabric
// manager packages, versioned on its own), and the running kernel's ib_umad module; a stack that names no
// NVLSM, or a kernel without ib_umad, refuses the layer before any change.
#include "layers/fabricmanager/fabricmanager.h"
#include "plan/host_state.h"
#include "plan/layer_plan.h"
#include "util/input.h"
#include "util/version.h"

namespace gp::layers {

// The plan kit (plan/): LayerPlan, LayerContext, Decided, MakeStep, Action, DecidePackages, host state.
using namespace plan;  // NOLINT(google-build-using-namespace)

namespace {
constexpr const char* kIbUmadModulesLoad = "/etc/modules-load.d/gpuprep-ib_umad.conf";
}  // namespace

LayerPlan PlanFabricManager(const LayerContext& ctx) {
  using Kind = LayerDecision::Kind;
  const char* const name = "fabricmanager";
  const auto& d = ctx.stack->driver;
  if (!NeedsFabricManager(*ctx.facts)) return Decided(name, Kind::kNotApplicable, "no NVSwitch on this host");
  if (!ctx.Selected(name)) return Decided(name, Kind::kSkipped, "not selected");
  if (!d.version.known())
    return Decided(name, Kind::kRefused, "the driver version is unknown, so the fabric manager's is too");
  if (d.fabricmanager_packages.empty())
    return Decided(name, Kind::kRefused,
                   "this host has NVSwitches but the stack names no fabric manager packages");
  const std::string want = d.version.version->str();
  std::vector<manifest::AptPackage> pkgs;
  for (const auto& p : d.fabricmanager_packages) {
    if (p.name == "nvlsm") continue;  // versioned on its own: below
    const std::string up = !p.version.empty()   ? DebVersion::Parse(p.version).upstream
                           : p.upstream.empty() ? want
                                                : p.upstream;
    if (up != want)
      return Decided(name, Kind::kRefused,
                     p.name + " " + up + " does not match driver " + want +
                         " (the fabric manager must run at exactly the driver's version)");
    pkgs.push_back(p);
  }
  if (HgxBlackwell(*ctx.facts)) {
    const manifest::AptPackage* nvlsm = NvlsmEntry(*ctx.stack);
    const probe::FabricInfo& f = ctx.facts->fabric;
    const bool pinned = nvlsm && (!nvlsm->version.empty() || !nvlsm->upstream.empty());
    // An NVLSM the host already has (a provider's image) is left as it is when the stack pins none.
    if (!pinned && !f.nvlsm.installed)
      return Decided(
          name, Kind::kRefused,
          "this HGX Blackwell host needs NVIDIA's NVLink Subnet Manager beside Fabric Manager; it is "
          "not installed and stack " +
              ctx.stack->name +
              " pins no nvlsm package: add one with its version to driver.fabricmanager_packages "
              "in a site manifest (extends: " +
              ctx.stack->name + ")");
    if (!f.ib_umad_loaded && !f.ib_umad_available) {
      // The kernel release is read from the host: outside input, named only when it makes a package name.
      const std::string extra = "linux-modules-extra-" + ctx.facts->kernel;
      return Decided(name, Kind::kRefused,
                     "this HGX Blackwell host needs the InfiniBand umad module (ib_umad) for NVLSM, and the "
                     "running kernel has none: install its extra modules (on Ubuntu: " +
                         (ValidDebName(extra) ? extra : std::string("linux-modules-extra-$(uname -r)")) +
                         "), which stay unpinned like every kernel package");
    }
    if (pinned) {  // installed, pinned and held at its own version, in the same transaction
      manifest::AptPackage at = *nvlsm;
      if (at.upstream.empty()) at.upstream = NvlsmPin(*ctx.stack);
      pkgs.push_back(at);
    }
  }
  LayerPlan out;
  out.packages = DecidePackages(ctx.packages, name, pkgs, want);
  if (!out.packages.error.empty()) {
    out.decision = Decided(name, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  std::string detail = out.packages.detail;
  if (!ctx.host->UnitEnabled("nvidia-fabricmanager.service")) {
    detail += std::string(detail.empty() ? "" : "; ") + "nvidia-fabricmanager not enabled";
    out.after_hold.push_back(
        MakeStep("fabricmanager.enable", {name}, "enable the fabric manager (NVSwitch)"));
    out.after_hold.back().actions.push_back(
        Action::Run({"systemctl", "enable", "nvidia-fabricmanager.service"}));
  }
  // NVLSM reaches the bridges through ib_umad: loaded now and at every boot (modules-load.d).
  if (HgxBlackwell(*ctx.facts) && !ctx.facts->fabric.ib_umad_loaded) {
    detail += std::string(detail.empty() ? "" : "; ") + "ib_umad not loaded";
    out.after_hold.push_back(MakeStep("fabricmanager.ib-umad", {name},
                                      "load the InfiniBand umad module for NVLSM, now and at every boot"));
    out.after_hold.back().actions.push_back(Action::Write(kIbUmadModulesLoad, "ib_umad\n", 0644, false));
    out.after_hold.back().actions.push_back(Action::Run({"modprobe", "ib_umad"}));
  }
  out.decision = Decided(name, detail.empty() ? Kind::kNone : Kind::kInstall,
                         detail.empty() ? "installed, held and enabled" : detail)
                     .decision;
  out.decision.found = FoundVersion(*ctx.packages.state, pkgs);
  out.decision.wanted = want;
  out.in_transaction = out.decision.kind == Kind::kInstall;
  return out;
}

}  // namespace gp::layers
