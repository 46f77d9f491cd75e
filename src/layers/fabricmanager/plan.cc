// fabricmanager's plan (NVSwitch hosts and HGX Blackwell baseboards): NVIDIA Fabric Manager at exactly the
// driver's version, held and pinned with the driver's transaction, and its unit enabled. On HGX Blackwell
// Fabric Manager also needs NVLSM and the umad library, each at the version the stack pins (the fabric
// packages among the driver's fabric manager packages, versioned on their own), and the running kernel's
// ib_umad module: from the kernel's extra modules (installed by name, never pinned) when the kernel has it
// in none of its own, loaded now and at every boot. A stack that names no NVLSM, or a kernel whose
// distribution publishes no extra modules with ib_umad, refuses the layer before any change.
#include "apt/availability.h"
#include "layers/fabricmanager/fabricmanager.h"
#include "plan/host_state.h"
#include "plan/layer_plan.h"
#include "plan/planner.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::layers {

// The plan kit (plan/): LayerPlan, LayerContext, Decided, MakeStep, Action, DecidePackages, host state.
using namespace plan;  // NOLINT(google-build-using-namespace)

namespace {

using Kind = LayerDecision::Kind;
constexpr const char* kFmName = "fabricmanager";

// One more part of the layer's detail ("; " between parts).
void FmAddDetail(std::string& detail, const std::string& part) {
  detail += std::string(detail.empty() ? "" : "; ") + part;
}

// The fabric manager's own packages (the fabric packages aside: versioned on their own) into `pkgs`; why the
// layer is refused ("" when not): one at another version than the driver's `want`.
std::string FmPackagesAtDriver(const LayerContext& ctx, const std::string& want,
                               std::vector<manifest::AptPackage>& pkgs) {
  for (const auto& p : ctx.stack->driver.fabricmanager_packages) {
    if (manifest::FabricPackage(p)) continue;  // versioned on their own: FmHgxPackages
    const std::string up = !p.version.empty()   ? DebVersion::Parse(p.version).upstream
                           : p.upstream.empty() ? want
                                                : p.upstream;
    if (up != want)
      return p.name + " " + up + " does not match driver " + want +
             " (the fabric manager must run at exactly the driver's version)";
    pkgs.push_back(p);
  }
  return "";
}

// Why an HGX Blackwell host is refused for want of NVLSM ("" when not): the stack pins none and the host
// has none (an NVLSM the host already has, a provider's image, is left as it is when the stack pins none).
std::string FmNvlsmMissing(const LayerContext& ctx) {
  const manifest::AptPackage* nvlsm = NvlsmEntry(*ctx.stack);
  const bool pinned = nvlsm && !nvlsm->NoVersion();
  if (pinned || ctx.facts->fabric.nvlsm.installed) return "";
  const std::string successor = NvlsmSuccessor(*ctx.stack);
  return "this HGX Blackwell host needs NVIDIA's NVLink Subnet Manager beside Fabric Manager; it is "
         "not installed and stack " +
         ctx.stack->name + " pins no nvlsm package: " +
         (successor.empty()
              ? std::string()
              : "move to " + successor + ", the same pins with NVLSM (gpuprep plan --manifest " + successor +
                    "), or ") +
         "add one with its version to driver.fabricmanager_packages in a site manifest (extends: " +
         ctx.stack->name + ")";
}

// Where ib_umad comes from when the running kernel has it in none of its own modules: its extra modules
// package, named in `extra`. Why the layer is refused ("" when not): the distribution publishes none.
std::string FmIbUmadSource(const LayerContext& ctx, std::string& extra) {
  const probe::FabricInfo& f = ctx.facts->fabric;
  if (f.ib_umad_loaded || f.ib_umad_available) return "";
  // Ubuntu ships ib_umad in the kernel's extra modules, installed here by name like the headers: a
  // kernel package, never pinned or held. The kernel release is read from the host: outside input.
  extra = "linux-modules-extra-" + ctx.facts->kernel;
  const apt::ListsAnswer found = ValidDebName(extra)
                                     ? KernelPackageAnswer(*ctx.in, extra)
                                     : apt::ListsAnswer{apt::Availability::kMissing, "a Debian package name"};
  if (found.state != apt::Availability::kMissing) return "";
  return "this HGX Blackwell host needs the InfiniBand umad module (ib_umad) for NVLSM, and the "
         "running kernel has none (" +
         (ValidDebName(extra) ? extra : std::string("linux-modules-extra-$(uname -r)")) + " is not in " +
         found.from +
         "): boot a kernel whose modules include ib_umad (on Ubuntu: the distribution's "
         "kernel with its linux-modules-extra package), then run gpuprep apply again";
}

// On HGX Blackwell: NVLSM and ib_umad checked, then NVLSM pinned and held at its own version in the same
// transaction (into `pkgs`); the umad library from the distribution by name (like its docker.io: never
// pinned; into `by_name`), unless the stack pins it too. Why the layer is refused ("" when not).
std::string FmHgxPackages(const LayerContext& ctx, std::vector<manifest::AptPackage>& pkgs,
                          std::string& extra, std::vector<std::string>& by_name) {
  if (std::string why = FmNvlsmMissing(ctx); !why.empty()) return why;
  if (std::string why = FmIbUmadSource(ctx, extra); !why.empty()) return why;
  for (const manifest::AptPackage& p : FabricPackagesFor(*ctx.stack, *ctx.facts)) {
    if (!p.NoVersion())
      pkgs.push_back(p);
    else if (p.name != "nvlsm" && !ctx.packages.state->Installed(p.name))
      by_name.push_back(p.name);
  }
  return "";
}

// The fabric manager's unit enabled, after the holds, when it is not.
void FmEnableStep(const LayerContext& ctx, LayerPlan& out, std::string& detail) {
  if (ctx.host->UnitEnabled("nvidia-fabricmanager.service")) return;
  FmAddDetail(detail, "nvidia-fabricmanager not enabled");
  out.after_hold.push_back(
      MakeStep("fabricmanager.enable", {kFmName}, "enable the fabric manager (NVSwitch)"));
  out.after_hold.back().actions.push_back(
      Action::Run({"systemctl", "enable", "nvidia-fabricmanager.service"}));
}

// On HGX Blackwell, NVLSM reaches the bridges through ib_umad: listed for every boot (modules-load.d), and
// loaded now.
void FmIbUmadStep(const LayerContext& ctx, LayerPlan& out, std::string& detail) {
  const bool loaded = ctx.facts->fabric.ib_umad_loaded;
  const bool listed = ctx.host->File(kIbUmadModulesLoad) == std::optional<std::string>("ib_umad\n");
  if (!HgxBlackwell(*ctx.facts) || (listed && loaded)) return;
  FmAddDetail(detail, loaded ? "ib_umad not listed for boot" : "ib_umad not loaded");
  out.after_hold.push_back(MakeStep("fabricmanager.ib-umad", {kFmName},
                                    "load the InfiniBand umad module for NVLSM, now and at every boot"));
  if (!listed)
    out.after_hold.back().actions.push_back(Action::Write(kIbUmadModulesLoad, "ib_umad\n", 0644, false));
  if (!loaded) out.after_hold.back().actions.push_back(Action::Run({"modprobe", "ib_umad"}));
}

// Fabric Manager reads NVLSM and ib_umad only when it starts: after a change (`detail`) on an HGX Blackwell
// host whose driver runs at `want` and stays (no reboot follows, the driver layer installs nothing), it is
// restarted.
void FmRestartStep(const LayerContext& ctx, const std::string& want, const std::string& detail,
                   LayerPlan& out) {
  const LayerDecision* driver = ctx.Earlier("driver");
  const bool driver_stays = ctx.facts->driver.module.loaded && ctx.facts->driver.module.version == want &&
                            (!driver || driver->kind == Kind::kNone || driver->kind == Kind::kSkipped);
  if (!HgxBlackwell(*ctx.facts) || detail.empty() || !driver_stays) return;
  out.last.push_back(MakeStep("fabricmanager.restart", {kFmName},
                              "restart the fabric manager, which starts NVLSM, so it uses what changed"));
  out.last.back().actions.push_back(Action::Run({"systemctl", "restart", "nvidia-fabricmanager.service"}));
}

}  // namespace

LayerPlan PlanFabricManager(const LayerContext& ctx) {
  const char* const name = kFmName;
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
  if (std::string why = FmPackagesAtDriver(ctx, want, pkgs); !why.empty())
    return Decided(name, Kind::kRefused, why);
  std::string extra;                 // the running kernel's extra modules, when ib_umad comes from them
  std::vector<std::string> by_name;  // the distribution's fabric packages, installed by name
  if (HgxBlackwell(*ctx.facts))
    if (std::string why = FmHgxPackages(ctx, pkgs, extra, by_name); !why.empty())
      return Decided(name, Kind::kRefused, why);
  LayerPlan out;
  out.packages = DecidePackages(ctx.packages, name, pkgs, want);
  if (!out.packages.error.empty()) {
    out.decision = Decided(name, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  std::string detail = out.packages.detail;
  if (!by_name.empty()) FmAddDetail(detail, "by name: " + Join(by_name, ", "));
  out.by_name = by_name;
  if (!extra.empty()) {
    out.by_name.push_back(extra);
    out.kernel_packages.push_back(extra);
    FmAddDetail(detail, "ib_umad from " + extra);
  }
  FmEnableStep(ctx, out, detail);
  FmIbUmadStep(ctx, out, detail);
  FmRestartStep(ctx, want, detail, out);
  out.decision = Decided(name, detail.empty() ? Kind::kNone : Kind::kInstall,
                         detail.empty() ? "installed, held and enabled" : detail)
                     .decision;
  out.decision.found = FoundVersion(*ctx.packages.state, pkgs);
  out.decision.wanted = want;
  out.in_transaction = out.decision.kind == Kind::kInstall;
  return out;
}

void FabricManagerReads(const manifest::Stack&, const probe::HostFacts& facts, host::Reads& out) {
  if (!HgxBlackwell(facts)) return;
  out.files.push_back(kIbUmadModulesLoad);
  if (!facts.kernel.empty() && !facts.gpus.empty() && !facts.fabric.ib_umad_loaded &&
      !facts.fabric.ib_umad_available)
    out.kernel_packages.push_back("linux-modules-extra-" + facts.kernel);
}

}  // namespace gp::layers
