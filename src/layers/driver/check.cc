// driver layer: nouveau, kernel module vs userspace library, branch vs each GPU, the stack's pin and CUDA,
// Secure Boot with an unsigned DKMS module, kernel headers, apt holds; the driver's recovery action per GPU.
#include "layers/check.h"

#include <algorithm>

#include "apt/driver_names.h"
#include "layers/driver/driver.h"
#include "layers/gpu/health.h"
#include "layers/table.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

// Persistence mode as NVML reports it, on every GPU that answered (nvidia-smi -pm 1, or a hypervisor's
// setting, keeps it on without the daemon): GPU state is then kept between jobs.
bool NvmlPersistenceOn(const probe::HostFacts& host) {
  int answered = 0;
  for (const auto& g : host.gpus) {
    if (!g.health.persistence) continue;
    if (!*g.health.persistence) return false;
    ++answered;
  }
  return answered > 0;
}

const char* kMismatch = "Failed to initialize NVML: Driver/library version mismatch";

std::string NouveauFix() {
  return ApplyFix("driver") +
         " (or: printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | "
         "sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot)";
}

std::string SecureBootFix(const std::string& os_id) {
  if (os_id == "debian")
    return "sudo dkms generate_mok && sudo mokutil --import /var/lib/dkms/mok.pub && sudo reboot "
           "(enroll the key in MokManager), or turn Secure Boot off";
  return "sudo update-secureboot-policy --new-key && sudo update-secureboot-policy --enroll-key && sudo "
         "reboot "
         "(enroll the key in MokManager), or turn Secure Boot off";
}

bool NouveauBound(const probe::HostFacts& h) {
  if (h.driver.nouveau_loaded) return true;
  return std::any_of(h.gpus.begin(), h.gpus.end(), [](const probe::Gpu& g) { return g.driver == "nouveau"; });
}

// Stack driver packages that are installed but not held; with none of the stack's installed, the host's
// own driver meta-packages (nvidia-driver-*, cuda-drivers*).
std::vector<std::string> Unheld(const CheckInput& in) {
  std::vector<std::string> out;
  bool any_stack = false;
  for (const auto& p : apt::DriverPackageCandidates(in.stack.driver)) {
    auto it = in.host.packages.find(p.name);
    if (it == in.host.packages.end()) continue;
    any_stack = true;
    if (!it->second.held) out.push_back(p.name);
  }
  if (any_stack) return out;
  for (const auto& [name, p] : in.host.packages)
    if ((StartsWith(name, "nvidia-driver-") || StartsWith(name, "cuda-drivers")) && !p.held)
      out.push_back(name);
  return out;
}

// NVIDIA's version-locking packages (nvidia-driver-pinning-<branch>): each installed one and the branch it
// locks; one for another branch than the stack's is a warning (apt would keep the driver on that branch, or
// move it there). Reported for stacks from R590 on, whose packages apt otherwise upgrades to the newest
// driver, and wherever one is installed.
void CheckVersionLock(const CheckInput& in, LayerReport& r) {
  const int branch = in.stack.driver.branch;
  bool any = false;
  for (const auto& [name, p] : in.host.packages) {
    const std::optional<int> locked = apt::LockedBranch(name);
    if (!locked) continue;
    any = true;
    if (*locked == branch)
      r.Add("driver.version-lock", Status::kOk,
            "NVIDIA's version-locking package " + name + " locks branch R" + std::to_string(*locked));
    else
      r.Add("driver.version-lock", Status::kWarn,
            "NVIDIA's version-locking package " + name + " locks branch R" + std::to_string(*locked) +
                " but stack " + in.stack.name + " is on R" + std::to_string(branch) +
                ": apt would keep the driver on the other branch",
            ApplyFix("driver") + " (or: sudo apt-get remove " + name + ")");
  }
  if (!any && branch >= apt::kFirstUnbranchedBranch)
    r.Add("driver.version-lock", Status::kOk,
          "no NVIDIA version-locking package is installed (gpuprep's pins and holds keep the driver at the "
          "stack's version)");
}

// Whether the driver is (or, with no module loaded, will be) NVIDIA's open kernel modules: the loaded
// module's NVRM line says; without one, the stack's flavour does.
bool OpenModules(const CheckInput& in) {
  if (in.host.driver.module.loaded) return in.host.driver.module.open;
  return in.stack.driver.flavour == "open" || in.stack.driver.flavour == "server-open";
}

// Flavour rules (compat.yaml driver_rules): a board only the open modules drive, or only the proprietary
// ones.
void CheckFlavour(const CheckInput& in, const manifest::GpuModel& m, bool open, LayerReport& r) {
  const std::string& flavour = in.stack.driver.flavour;
  const bool stack_open = flavour == "open" || flavour == "server-open";
  if (m.requires_open && !open)
    r.Add("driver.needs-open-modules", Status::kFail,
          m.name + " runs only on NVIDIA's open kernel modules; the " +
              (in.host.driver.module.loaded ? std::string("loaded module is proprietary")
                                            : "stack pins the " + flavour + " flavour"),
          stack_open ? ApplyFix("driver")
                     : "choose a stack with the open driver flavour: gpuprep manifest list");
  if (!m.open_modules && open)
    r.Add("driver.open-unsupported", Status::kFail,
          "the open kernel modules do not support " + m.name + " (" + m.arch +
              "; they support Turing and later)",
          stack_open ? "choose a stack with the proprietary driver flavour: gpuprep manifest list"
                     : ApplyFix("driver"));
}

// The per-release data (GpuModel::support, from NVIDIA's README of each release): a release that does not
// list the board is a warning naming the first release of the host's branch that does, or the branches that
// do; the README lags real support, so not listed is not proof of unsupported.
void CheckListed(const CheckInput& in, const Version& dv, const manifest::GpuModel& m, LayerReport& r) {
  using State = manifest::BoardSupport::State;
  const manifest::BoardSupport s = m.SupportAt(dv);
  const std::string branch = "R" + std::to_string(dv.major());
  const manifest::Pinned& pin = in.stack.driver.version;
  const bool stack_lists = pin.known() && m.SupportAt(*pin.version).state == State::kListed;
  if (s.state == State::kNotYet) {
    r.Add("driver.board-not-yet-listed", Status::kWarn,
          "driver " + dv.str() + " predates " + s.first->str() + ", the first " + branch +
              " release (betas aside) whose supported-GPU list names " + m.name,
          stack_lists
              ? ApplyFix("driver")
              : "install " + s.first->str() + " or later: choose a stack with it (gpuprep manifest list)");
  } else if (s.state == State::kNotInBranch) {
    const std::string others = m.SupportingBranches();
    r.Add(
        "driver.board-not-in-branch", Status::kWarn,
        "no " + branch + " release (betas aside) lists " + m.name +
            (others.empty() ? std::string(" (no branch does yet)") : "; the branches that do: " + others),
        stack_lists ? ApplyFix("driver") : "choose a stack on one of those branches: gpuprep manifest list");
  }
}

// A branch the per-release data does not cover (newer than its newest release, or older than its first) for a
// board it has data for: the board is judged by branch alone, and the row says so once (a skipped check,
// which the table prints and which leaves the row's status to the other findings).
void NoteBranchOutsideData(int branch, const std::vector<const manifest::GpuModel*>& models, LayerReport& r) {
  const bool by_branch = std::any_of(models.begin(), models.end(), [&](const manifest::GpuModel* m) {
    return !m->support.empty() && m->support.count(branch) == 0;
  });
  if (by_branch)
    r.Add("driver.no-release-data", Status::kSkip,
          "no per-release support data for R" + std::to_string(branch) + ": judged by branch");
}

void CheckBranchForGpus(const CheckInput& in, const Version& dv, LayerReport& r) {
  const int branch = static_cast<int>(dv.major());
  const int stack_branch = in.stack.driver.branch;
  const bool open = OpenModules(in);
  const std::vector<const manifest::GpuModel*> models = HostGpuModels(in.compat, in.host);
  NoteBranchOutsideData(branch, models, r);
  for (const manifest::GpuModel* m : models) {
    CheckFlavour(in, *m, open, r);
    CheckListed(in, dv, *m, r);
    if (m->min_driver_branch && branch < m->min_driver_branch) {
      std::string need = "R" + std::to_string(m->min_driver_branch);
      r.Add("driver.branch-too-old", Status::kFail,
            "driver branch " + std::to_string(branch) + " does not support " + m->name + " (needs " + need +
                " or later)",
            stack_branch >= m->min_driver_branch
                ? ApplyFix("driver")
                : "choose a stack with driver branch " + std::to_string(m->min_driver_branch) +
                      " or later: gpuprep manifest list");
    }
    if (m->last_driver_branch && branch > *m->last_driver_branch) {
      std::string last = "R" + std::to_string(*m->last_driver_branch);
      r.Add("driver.branch-too-new", Status::kFail,
            "driver branch " + std::to_string(branch) + " no longer supports " + m->name +
                " (its last branch is " + last + ")",
            stack_branch <= *m->last_driver_branch
                ? ApplyFix("driver")
                : "choose a stack with driver branch " + std::to_string(*m->last_driver_branch) +
                      " or older: gpuprep manifest list");
    }
  }
}

// The stack's driver branch past its end of life (`in.today` is YYYY-MM-DD, end_of_life YYYY-MM).
void CheckEndOfLife(const CheckInput& in, LayerReport& r) {
  const manifest::DriverSpec& spec = in.stack.driver;
  if (!spec.end_of_life.empty() && in.today.size() >= 7 && in.today.substr(0, 7) > spec.end_of_life)
    r.Add("driver.end-of-life", Status::kWarn,
          "driver branch R" + std::to_string(spec.branch) + " of stack " + in.stack.name +
              " reached end of life in " + spec.end_of_life + " and gets no more security fixes",
          "move to a current stack: gpuprep manifest list, then sudo gpuprep apply --yes --manifest NAME");
}

// nouveau bound to the GPUs: blacklisted but still in the initramfs, or not blacklisted at all.
void CheckNouveau(const CheckInput& in, LayerReport& r) {
  if (!NouveauBound(in.host)) return;
  if (in.host.driver.nouveau_blacklisted)
    r.Add("driver.nouveau-initramfs", Status::kFail,
          "nouveau is blacklisted but still bound to the GPUs (the initramfs predates the blacklist)",
          "sudo update-initramfs -u && sudo reboot");
  else
    r.Add("driver.nouveau", Status::kFail,
          "nouveau (the open-source driver) is bound to the GPUs: the NVIDIA driver cannot load",
          NouveauFix());
}

// Secure Boot refusing an unsigned DKMS module, then the kernel headers DKMS needs; returns whether Secure
// Boot blocks the module (a module that is not loaded is then not a finding of its own).
bool CheckSecureBootAndHeaders(const CheckInput& in, LayerReport& r) {
  const manifest::DriverSpec& spec = in.stack.driver;
  const probe::DriverInfo& d = in.host.driver;
  bool secure_boot_blocks =
      d.secure_boot.value_or(false) && d.dkms_module && !d.dkms_signed && !spec.signed_modules;
  if (secure_boot_blocks)
    r.Add("driver.secure-boot-unsigned", Status::kFail,
          "Secure Boot is on and the DKMS-built nvidia module is not signed with an enrolled key: the kernel "
          "refuses to load it",
          SecureBootFix(in.host.os.id));
  bool needs_headers = d.dkms_module || !spec.signed_modules;
  if (!d.kernel_headers && needs_headers && !in.host.kernel.empty())
    r.Add("driver.kernel-headers", Status::kWarn,
          "no kernel headers for " + in.host.kernel + ": DKMS cannot build the nvidia module for it",
          "sudo apt-get install linux-headers-" + in.host.kernel);
  return secure_boot_blocks;
}

// The kernel module (version `dv`) against the userspace driver: not loaded, unreadable, mismatched or
// agreeing.
void CheckModuleMatch(const CheckInput& in, const Version& dv, bool secure_boot_blocks, LayerReport& r) {
  const probe::DriverInfo& d = in.host.driver;
  if (!d.module.loaded) {
    if (!secure_boot_blocks)
      r.Add("driver.module-not-loaded", Status::kFail,
            "userspace driver " + d.userspace_version + " is installed but the kernel module is not loaded",
            "sudo modprobe nvidia (or sudo reboot)");
  } else if (!ParseFound(d.module.version)) {
    // A loaded module whose version cannot be read agrees with nothing: say so instead of comparing the
    // userspace driver with itself.
    r.Add(Status::kFail,
          "the loaded kernel module's version \"" + d.module.version +
              "\" cannot be read, so it cannot be compared with the userspace driver",
          "cat /proc/driver/nvidia/version (reboot if the module is from another driver)");
  } else {
    auto user = ParseFound(d.userspace_version);
    bool nvml_says = d.nvml_error && d.nvml_error->find("mismatch") != std::string::npos;
    if ((user && *user != dv) || nvml_says) {
      std::string pair = user ? "kernel module " + dv.str() + " != userspace driver " + user->str()
                              : "kernel module " + dv.str() + " does not match the userspace driver";
      const std::string who = d.userspace_moved_by.found() ? "; " + WhoMoved(d.userspace_moved_by) : "";
      r.Add("driver.module-mismatch", Status::kFail, pair + " (\"" + kMismatch + "\")" + who, "sudo reboot");
    } else {
      r.Add("driver.module-match", Status::kOk, "kernel module and userspace driver agree");
    }
  }
}

// The driver `dv` against the stack's CUDA, then against the stack's pin.
void CheckCudaAndPin(const CheckInput& in, const Version& dv, LayerReport& r) {
  const manifest::DriverSpec& spec = in.stack.driver;
  const manifest::Pinned& cuda = in.stack.cuda.version;
  if (in.stack.cuda.enabled && cuda.known()) {
    CudaVerdict v = DriverRunsCuda(in.compat, dv, *cuda.version, "the stack's CUDA " + cuda.version->str(),
                                   AllDatacenter(in.compat, in.host), {});
    r.Add("driver.cuda-compat", v.status, v.message,
          v.status == Status::kOk ? std::nullopt : std::optional<std::string>(ApplyFix("driver")));
  }
  // Older than the stack's pin matters on its own only when nothing above already says the driver must
  // change.
  if (spec.version.known() && dv < *spec.version.version && r.status != Status::kFail)
    r.Add("driver.outdated", Status::kWarn,
          "driver " + dv.str() + " is older than the stack's " + spec.version.version->str(),
          ApplyFix("driver"));
}

// The driver layer includes persistence (docs/cli.md, "Layers"): without the daemon the driver tears down
// GPU state when the last client exits, so every job start pays for re-initialisation. Data-center hosts
// only.
void CheckPersistenced(const CheckInput& in, LayerReport& r) {
  const probe::DriverInfo& d = in.host.driver;
  // A daemon started by hand keeps persistence until the next boot only: apply enables its unit.
  if (d.module.loaded && !d.persistenced_enabled && d.persistenced_running &&
      AllDatacenter(in.compat, in.host))
    r.Add("driver.persistenced", Status::kWarn,
          "nvidia-persistenced is running but not enabled: it does not start at the next boot",
          "sudo systemctl enable nvidia-persistenced");
  else if (d.module.loaded && !d.persistenced_enabled && !NvmlPersistenceOn(in.host) &&
           AllDatacenter(in.compat, in.host))
    r.Add("driver.persistenced", Status::kWarn,
          "nvidia-persistenced is not enabled: GPU state is torn down between jobs",
          "sudo systemctl enable --now nvidia-persistenced");
}

// Driver packages apt could upgrade under the loaded kernel module (Unheld).
void CheckUnheld(const CheckInput& in, LayerReport& r) {
  std::vector<std::string> unheld = Unheld(in);
  if (!unheld.empty())
    r.Add("driver.not-held", Status::kWarn,
          "driver packages not held (" + Join(unheld, ", ") +
              "): an upgrade can replace the userspace driver under the loaded kernel module",
          "sudo apt-mark hold " + Join(unheld, " "));
}

}  // namespace

LayerReport CheckDriver(const CheckInput& in) {
  LayerReport r;
  r.name = "driver";
  const manifest::DriverSpec& spec = in.stack.driver;
  r.wanted = spec.version.known() ? ">= " + spec.version.version->str() : "R" + std::to_string(spec.branch);
  std::optional<Version> dv = HostDriverVersion(in.host);
  if (dv) r.found = dv->str();
  CheckEndOfLife(in, r);
  if (spec.version.unknown) {
    r.Add("driver.version-unknown", Status::kSkip,
          "the stack's driver version is unknown: " + spec.version.reason);
    return r;
  }

  // Without a GPU there is nothing for a driver to drive (the gpu layer fails); headers and Secure Boot
  // would only be noise.
  if (!dv && in.host.gpus.empty()) {
    r.Add("driver.no-gpu", Status::kSkip, "no NVIDIA GPU and no NVIDIA driver");
    return r;
  }
  CheckNouveau(in, r);
  const bool secure_boot_blocks = CheckSecureBootAndHeaders(in, r);
  if (!dv) {
    r.Add("driver.missing", Status::kFail, "NVIDIA driver not installed", ApplyFix("driver"));
    return r;
  }
  CheckModuleMatch(in, *dv, secure_boot_blocks, r);
  CheckBranchForGpus(in, *dv, r);
  CheckRecoveryActions(in, r);
  CheckCudaAndPin(in, *dv, r);
  CheckPersistenced(in, r);
  CheckUnheld(in, r);
  CheckVersionLock(in, r);
  CheckKernels(in, r);
  CheckFutureKernels(in, r);
  return r;
}

extern const Layer kDriverLayer = {
    "driver",     CheckDriver,
    nullptr,      PlanDriver,
    VerifyDriver, [](const manifest::Stack&, const probe::HostFacts& h) { return !h.gpus.empty(); },
    DriverReads};

}  // namespace gp::layers
