// driver's plan: the stack must serve every GPU (architecture, claimed boards, compat.yaml's driver rules),
// then NVIDIA's packages at the pin under the names the repository publishes for the branch, with NVIDIA's
// version-locking package from R590 on (with the running kernel's headers for DKMS, refused under Secure
// Boot for unsigned modules), nouveau blacklisted, the persistence daemon enabled, and a reboot when the new
// driver is not the loaded one.
#include <algorithm>
#include <optional>

#include "apt/availability.h"
#include "apt/driver_names.h"
#include "layers/driver/driver.h"
#include "layers/fabricmanager/fabricmanager.h"
#include "manifest/loader.h"
#include "plan/host_state.h"
#include "plan/kernel_headers.h"
#include "plan/layer_plan.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::layers {

// The plan kit (plan/): LayerPlan, LayerContext, Decided, MakeStep, Action, DecidePackages, host state.
using namespace plan;  // NOLINT(google-build-using-namespace)
namespace {

using Kind = LayerDecision::Kind;

// A host the stack cannot serve is refused before any change (like Secure Boot): installing CUDA and
// friends for a driver that will never load only leaves packages behind.
LayerPlan Block(LayerPlan out, const std::string& why) {
  out.blockers.push_back(why);
  out.blocked = true;
  out.decision = Decided("driver", Kind::kRefused, why).decision;
  return out;
}

// Why a GPU of the host cannot run the stack ("" when every one can).
std::string UnservedGpu(const manifest::Stack& stack, const probe::HostFacts& facts) {
  const auto& d = stack.driver;
  if (std::string why = PlatformDriverProblem(facts, *d.version.version); !why.empty())
    return "stack " + stack.name + ": " + why + "; choose another stack with --manifest";
  const bool open = d.flavour == "open" || d.flavour == "server-open";
  for (const auto& g : facts.gpus) {
    const std::string gpu = "GPU " + g.pci + " (" + g.name + ")";
    if (!g.architecture.empty() && !stack.architectures.empty() &&
        std::find(stack.architectures.begin(), stack.architectures.end(), g.architecture) ==
            stack.architectures.end())
      return gpu + " is " + g.architecture + ", which stack " + stack.name + " does not support (" +
             Join(stack.architectures, ", ") + "); choose a stack for " + g.architecture +
             " GPUs with --manifest";
    // The flavour and ceiling rules of compat.yaml (driver_rules), as doctor and manifest validate apply
    // them.
    const manifest::GpuModel* m =
        manifest::EmbeddedCompat().GpuByPci(g.device_id, g.subsystem_vendor_id, g.subsystem_device_id);
    std::optional<int> cuda_major;
    if (stack.cuda.enabled && stack.cuda.version.known())
      cuda_major = static_cast<int>(stack.cuda.version.version->major());
    if (m) {
      for (const auto& ex : stack.boards_excluded)
        if (ex.Matches(*m))
          return gpu + " is not claimed by stack " + stack.name + ": " + ex.why +
                 "; choose another stack with --manifest";
      if (std::string why = m->StackCannotRun(*d.version.version, open, cuda_major); !why.empty())
        return gpu + ": stack " + stack.name + " (driver " + d.version.version->str() + ", " + d.flavour +
               ") cannot run it: " + why + "; choose another stack with --manifest";
    }
  }
  return "";
}

// Why a driver install is refused when the distribution does not publish the running kernel's headers:
// a provider's own kernel, or a distribution kernel so old its archive dropped it.
std::string HeadersMissing(const LayerContext& ctx, const std::string& headers, const std::string& from) {
  const std::string& kernel = ctx.facts->kernel;
  return "kernel " + kernel + " has no headers package (" + headers + " is not in " + from +
         "), so DKMS cannot build NVIDIA's module for it: install the distribution's current kernel (its "
         "meta package: linux-generic on Ubuntu, linux-image-" +
         (ctx.arch.empty() ? "amd64" : ctx.arch) +
         " on Debian) and reboot, or install this kernel's headers from its provider (/lib/modules/" +
         kernel + "/build), then run gpuprep apply again; or leave the driver as it is with --skip driver";
}

// The check that reboots when the new driver is not the loaded one. A plan refused after the driver's
// packages were decided still ends with it (and says apply would reboot), as it lists their install.
void RebootCheck(LayerPlan& out, const std::string& pinned) {
  Action a;
  a.kind = Action::Kind::kRebootCheck;
  a.contents = pinned;
  out.last.push_back(MakeStep("reboot.check", {"driver"}, "reboot if the new driver is not the loaded one"));
  out.last.back().actions.push_back(a);
}

void AddDetail(std::string& detail, const std::string& part) {
  detail += std::string(detail.empty() ? "" : "; ") + part;
}

// The stack's driver packages under the names the repository's index knows (at apply time; without one,
// the host's dpkg database).
std::vector<manifest::AptPackage> DriverPackagesFor(const LayerContext& ctx) {
  const apt::Index* index = ctx.packages.index;
  const PackageState& state = *ctx.packages.state;
  return apt::DriverPackages(ctx.stack->driver, [&](const std::string& name) {
    return index ? index->Find(name) != nullptr : state.Installed(name) != nullptr;
  });
}

// From R590 on, NVIDIA's version-locking package of the branch where the index publishes it at the stack's
// version (without an index: where it is installed there). gpuprep pins and holds it with the rest: a
// second lock beside gpuprep's exact pins, which stay the ones that decide.
std::optional<manifest::AptPackage> LockAtPin(const LayerContext& ctx) {
  const auto& d = ctx.stack->driver;
  if (d.branch < apt::kFirstUnbranchedBranch) return std::nullopt;
  apt::PinRule lock;
  lock.name = apt::LockingPackage(d.branch);
  lock.upstream = d.version.version->str();
  const std::string* have = ctx.packages.state->Installed(lock.name);
  if (ctx.packages.index ? apt::ResolvePin(*ctx.packages.index, lock).ok()
                         : have && apt::MatchesPin(*have, lock))
    return manifest::AptPackage{lock.name, "", ""};
  return std::nullopt;
}

// NVIDIA's version-locking packages installed for another branch than the stack's (left by a stack switch):
// they would hold the driver to that branch, so the transaction removes them ("name-" on apt-get's install
// line); gpuprep's own pin and hold on one are released as the stack's pins move.
std::vector<std::string> StaleLocks(const PackageState& state, int branch) {
  std::vector<std::string> out;
  for (const auto& [name, version] : state.installed)
    if (auto locked = apt::LockedBranch(name); locked && *locked != branch) out.push_back(name);
  return out;
}

// The installed NVIDIA driver packages of another release that someone other than gpuprep holds (a
// provider's image, an administrator's apt-mark hold) and that are not the stack's own: NVIDIA's and
// Ubuntu's driver packages conflict across branches (and depend on one release within a branch), so apt
// replaces them for the stack's driver, and with -y refuses to unless held packages may change ("Held
// packages were changed and -y was used without --allow-change-held-packages"). Told apart by their version,
// a driver release ("580.95.05-1ubuntu1") other than the pin. gpuprep's own pins and the version-locking
// packages are released by the transaction and StaleLocks.
std::vector<std::string> HeldOtherDrivers(const PackageState& state, const Version& pinned,
                                          const std::vector<PackageRoot>& own) {
  std::vector<std::string> out;
  for (const auto& installed : state.installed) {
    const std::string& name = installed.first;  // not a structured binding: the lambda below captures it
    const std::string& version = installed.second;
    if (!state.Held(name) || state.pins.count(name) || apt::LockedBranch(name)) continue;
    if (!StartsWith(name, "nvidia-") && !StartsWith(name, "libnvidia-") && !StartsWith(name, "cuda-drivers"))
      continue;
    if (std::any_of(own.begin(), own.end(), [&](const PackageRoot& r) { return r.name == name; })) continue;
    auto v = UpstreamRelease(version);
    if (v && v->size() >= 2 && v->major() >= 100 && *v != pinned) out.push_back(name);
  }
  return out;
}

// What the driver's install replaces: NVIDIA's version-locking packages of another branch, removed
// (StaleLocks), and, when it installs, held driver packages of another release (HeldOtherDrivers).
void ReleaseOtherDrivers(const LayerContext& ctx, bool installs, LayerPlan& out, std::string& detail) {
  const auto& d = ctx.stack->driver;
  const PackageState& state = *ctx.packages.state;
  for (const auto& name : StaleLocks(state, d.branch)) {
    out.by_name.push_back(name + "-");  // apt-get install's word for "remove this package"
    out.packages.allow_held = out.packages.allow_held || state.Held(name);
    AddDetail(detail,
              "remove " + name + " (it locks another driver branch than R" + std::to_string(d.branch) + ")");
  }
  if (installs) {
    const std::vector<std::string> held = HeldOtherDrivers(state, *d.version.version, out.packages.roots);
    if (!held.empty()) {
      out.packages.allow_held = true;
      AddDetail(detail, "replace " + Join(held, ", ") + " (another driver release, held outside gpuprep)");
    }
  }
}

// The running kernel's headers, for DKMS, first on the install line. Why the install is refused ("" when
// not): the distribution does not publish them, or the kernel's release makes no package name.
std::string AddKernelHeaders(const LayerContext& ctx, LayerPlan& out, std::string& detail) {
  const probe::HostFacts& facts = *ctx.facts;
  const std::string headers = apt::KernelHeadersPackage(facts.kernel);
  const apt::ListsAnswer found = KernelPackageAnswer(*ctx.in, headers);
  if (found.state == apt::Availability::kMissing) return HeadersMissing(ctx, headers, found.from);
  if (!ValidDebName(headers))  // the kernel release is read from the host: outside input
    return HeadersMissing(ctx, headers, "a Debian package name");
  out.packages.install.insert(out.packages.install.begin(), headers);
  out.kernel_packages.push_back(headers);
  detail += "; kernel headers for " + facts.kernel;
  return "";
}

// Whether Secure Boot is on and the stack's DKMS modules would be unsigned.
bool UnsignedUnderSecureBoot(const LayerContext& ctx) {
  const probe::HostFacts& facts = *ctx.facts;
  return facts.driver.secure_boot.value_or(false) && !ctx.stack->driver.signed_modules &&
         !facts.driver.dkms_signed;
}

// The install refused under Secure Boot until a Machine Owner Key is enrolled.
LayerPlan RefuseUnsignedModules(LayerPlan out, const std::string& stack) {
  out.blockers.push_back(
      "Secure Boot is on and stack " + stack +
      " builds unsigned DKMS modules: enrol a Machine Owner Key "
      "first (sudo mokutil --import /var/lib/shim-signed/mok/MOK.der, or sudo update-secureboot-policy "
      "--new-key), reboot and confirm the key in the MOK manager, then run gpuprep apply again; or "
      "disable "
      "Secure Boot, or use a stack with driver.signed_modules: true");
  out.blocked = true;
  out.decision =
      Decided("driver", Kind::kRefused, "Secure Boot is on and the modules would be unsigned").decision;
  return out;
}

// nouveau blacklisted, when it is loaded or the driver installs; returns whether the step is planned.
bool NouveauBlacklistStep(const HostState& host, bool installs, LayerPlan& out, std::string& detail) {
  const bool nouveau = !host.nouveau_blacklisted && (host.nouveau_loaded || installs);
  if (!nouveau) return false;
  AddDetail(detail, "nouveau not blacklisted");
  // After the install: a failed install must not leave a host whose only display driver is blacklisted.
  Step s = MakeStep("driver.nouveau", {"driver"}, "blacklist nouveau so the NVIDIA module can bind the GPUs");
  s.actions.push_back(Action::Write(kNouveauBlacklistPath, kNouveauBlacklist));
  s.actions.push_back(Action::Run({"update-initramfs", "-u"}));
  out.after_install.push_back(s);
  return true;
}

// The persistence daemon enabled. Enabled is what survives a reboot: a daemon started by hand (running, not
// enabled) is enabled too.
void PersistencedStep(const HostState& host, LayerPlan& out, std::string& detail) {
  if (host.UnitEnabled("nvidia-persistenced.service")) return;
  AddDetail(detail, "nvidia-persistenced not enabled");
  out.after_hold.push_back(MakeStep("driver.persistenced", {"driver"}, "enable the persistence daemon"));
  out.after_hold.back().actions.push_back(
      Action::Run({"systemctl", "enable", "nvidia-persistenced.service"}));
}

// The layer's decision once its steps are planned: an install when anything changes (`detail`), else a
// reboot the host still needs, else the driver as it is (`other_source`: loaded at the pin from other
// packages). Without an install, the reboot check ends the plan when nouveau's blacklist or such a reboot
// is pending.
void DecideDriver(const LayerContext& ctx, const std::vector<manifest::AptPackage>& packages, bool installs,
                  bool nouveau, bool other_source, const std::string& detail, LayerPlan& out) {
  const auto& d = ctx.stack->driver;
  const probe::HostFacts& facts = *ctx.facts;
  const std::string pinned = d.version.version->str();
  const std::vector<std::string> reboot_reasons =
      installs ? std::vector<std::string>{} : RebootReasons(*ctx.host, *ctx.stack);
  if (!installs && (nouveau || !reboot_reasons.empty())) RebootCheck(out, pinned);
  out.in_transaction = installs || !out.packages.install.empty();
  out.decision = Decided("driver", Kind::kNone, detail).decision;
  LayerDecision& l = out.decision;
  l.found =
      facts.driver.module.loaded ? facts.driver.module.version : FoundVersion(*ctx.packages.state, packages);
  l.wanted = Wanted(d.version, d.packages);
  if (!detail.empty()) {
    l.kind = Kind::kInstall;
  } else if (!reboot_reasons.empty()) {
    l.kind = Kind::kReboot;
    l.detail = "reboot required: " + Join(reboot_reasons, "; ");
  } else {
    l.detail = other_source
                   ? "driver " + pinned +
                         " is loaded and its libraries match (installed by other packages; left as they are)"
                   : "installed and held";
  }
}

}  // namespace

LayerPlan PlanDriver(const LayerContext& ctx) {
  const auto& d = ctx.stack->driver;
  const probe::HostFacts& facts = *ctx.facts;
  if (!ctx.Selected("driver")) return Decided("driver", Kind::kSkipped, "not selected");
  LayerPlan out;
  if (facts.gpus.empty())
    return Block(std::move(out), "no NVIDIA GPU on this host: stack " + ctx.stack->name +
                                     " sets up a GPU driver (to install only the libraries: --skip driver)");
  if (auto why = UnknownPin(ctx.stack->name, "driver", d.version, d.packages); !why.empty())
    return Decided("driver", Kind::kRefused, why);
  if (auto why = UnservedGpu(*ctx.stack, facts); !why.empty()) return Block(std::move(out), why);
  const std::vector<manifest::AptPackage> packages = DriverPackagesFor(ctx);
  std::vector<manifest::AptPackage> with_lock = packages;
  if (auto lock = LockAtPin(ctx)) with_lock.push_back(*lock);
  // A driver at exactly the pinned version that other packages installed (the provider's image, Ubuntu's
  // nvidia-driver-NNN) is loaded and answers: installing NVIDIA's packages over it would only churn.
  const std::string pinned = d.version.version->str();
  const PackageState& state = *ctx.packages.state;
  const bool other_source = facts.driver.module.loaded && facts.driver.module.version == pinned &&
                            facts.driver.userspace_version == pinned && FoundVersion(state, packages).empty();
  if (!other_source) out.packages = DecidePackages(ctx.packages, "driver", with_lock, pinned);
  if (!out.packages.error.empty()) {
    const std::string error = out.packages.error;
    return Block(std::move(out), error);
  }
  std::string detail = out.packages.detail;
  const bool installs = !out.packages.install.empty();
  ReleaseOtherDrivers(ctx, installs, out, detail);
  out.reboot = installs;
  if (installs) RebootCheck(out, pinned);
  if (installs && !facts.driver.kernel_headers && !facts.kernel.empty())
    if (std::string why = AddKernelHeaders(ctx, out, detail); !why.empty()) return Block(std::move(out), why);
  std::vector<std::string> kernel_details;
  PlanFutureKernels(ctx, out, kernel_details);
  for (const auto& part : kernel_details) AddDetail(detail, part);
  if (installs && UnsignedUnderSecureBoot(ctx)) return RefuseUnsignedModules(std::move(out), ctx.stack->name);
  const bool nouveau = NouveauBlacklistStep(*ctx.host, installs, out, detail);
  PersistencedStep(*ctx.host, out, detail);
  DecideDriver(ctx, packages, installs, nouveau, other_source, detail, out);
  return out;
}

void DriverReads(const manifest::Stack&, const probe::HostFacts& facts, host::Reads& out) {
  if (facts.kernel.empty() || facts.gpus.empty()) return;
  if (!facts.driver.kernel_headers) out.kernel_packages.push_back(apt::KernelHeadersPackage(facts.kernel));
  for (auto& meta : plan::HeadersMetasToAdd(facts)) out.kernel_packages.push_back(std::move(meta));
  for (const probe::InstalledKernel* k : plan::KernelsWithoutModule(facts))
    if (!k->headers) out.kernel_packages.push_back(apt::KernelHeadersPackage(k->release));
}

}  // namespace gp::layers
