// fabricmanager's plan (NVSwitch hosts only): NVIDIA Fabric Manager at exactly the driver's version, held and
// pinned with the driver's transaction, and its unit enabled.
#include "layers/fabricmanager/fabricmanager.h"
#include "plan/host_state.h"
#include "plan/layer_plan.h"
#include "util/version.h"

namespace gp::layers {

// The plan kit (plan/): LayerPlan, LayerContext, Decided, MakeStep, Action, DecidePackages, host state.
using namespace plan;  // NOLINT(google-build-using-namespace)

LayerPlan PlanFabricManager(const LayerContext& ctx) {
  using Kind = LayerDecision::Kind;
  const char* const name = "fabricmanager";
  const auto& d = ctx.stack->driver;
  if (ctx.facts->nvswitch_count == 0) return Decided(name, Kind::kNotApplicable, "no NVSwitch on this host");
  if (!ctx.Selected(name)) return Decided(name, Kind::kSkipped, "not selected");
  if (!d.version.known())
    return Decided(name, Kind::kRefused, "the driver version is unknown, so the fabric manager's is too");
  if (d.fabricmanager_packages.empty())
    return Decided(name, Kind::kRefused,
                   "this host has NVSwitches but the stack names no fabric manager packages");
  const std::string want = d.version.version->str();
  for (const auto& p : d.fabricmanager_packages) {
    const std::string up = !p.version.empty()   ? DebVersion::Parse(p.version).upstream
                           : p.upstream.empty() ? want
                                                : p.upstream;
    if (up != want)
      return Decided(name, Kind::kRefused,
                     p.name + " " + up + " does not match driver " + want +
                         " (the fabric manager must run at exactly the driver's version)");
  }
  LayerPlan out;
  out.packages = DecidePackages(ctx.packages, name, d.fabricmanager_packages, want);
  if (!out.packages.error.empty()) {
    out.decision = Decided(name, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  std::string detail = out.packages.detail;
  if (!UnitEnabled(*ctx.fs, "nvidia-fabricmanager.service")) {
    detail += std::string(detail.empty() ? "" : "; ") + "nvidia-fabricmanager not enabled";
    out.after_hold.push_back(
        MakeStep("fabricmanager.enable", {name}, "enable the fabric manager (NVSwitch)"));
    out.after_hold.back().actions.push_back(
        Action::Run({"systemctl", "enable", "nvidia-fabricmanager.service"}));
  }
  out.decision = Decided(name, detail.empty() ? Kind::kNone : Kind::kInstall,
                         detail.empty() ? "installed, held and enabled" : detail)
                     .decision;
  out.decision.found = FoundVersion(*ctx.packages.state, d.fabricmanager_packages);
  out.decision.wanted = want;
  out.in_transaction = out.decision.kind == Kind::kInstall;
  return out;
}

}  // namespace gp::layers
