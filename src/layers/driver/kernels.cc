// Every installed kernel against the driver: a kernel without an nvidia module for it boots without a GPU
// driver, often weeks after the update that installed it. Said before the reboot, with the exact commands.
#include "layers/check.h"
#include "layers/driver/driver.h"
#include "probe/boot.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::layers {
namespace {

// Why kernel `k` has no module for the driver; "" when it has one.
std::string MissingWhy(const probe::InstalledKernel& k, int branch, const std::string& userspace) {
  if (k.module_path.empty()) return "its modules.dep lists no nvidia module";
  if (!k.module_version.empty() && !userspace.empty() && k.module_version != userspace)
    return "its nvidia module is " + k.module_version + ", the userspace driver " + userspace;
  if (k.module_branch != 0 && branch != 0 && k.module_branch != branch)
    return "its nvidia module is from branch R" + std::to_string(k.module_branch) + ", the stack's is R" +
           std::to_string(branch);
  return {};
}

// The DKMS version to build for kernel `k`: the userspace driver's when the DKMS tree has it, else the one
// that already has a directory for `k`, else the newest; "" when the DKMS tree has none.
std::string DkmsVersionFor(const probe::InstalledKernel& k, const probe::BootInfo& boot,
                           const std::string& userspace) {
  for (const auto& v : boot.dkms_versions)
    if (v == userspace) return v;
  if (!k.dkms_version.empty()) return k.dkms_version;
  return boot.dkms_versions.empty() ? std::string() : boot.dkms_versions.front();
}

// The commands that give kernel `k` a module: its headers, then DKMS builds for it.
std::string RebuildFix(const probe::InstalledKernel& k, bool dkms, int branch,
                       const std::string& dkms_version) {
  if (!probe::ValidKernelRelease(k.release)) return ApplyFix("driver");
  if (!dkms)
    return "install the nvidia module package for " + k.release +
           " (apt-cache search '^linux-modules-nvidia-" + std::to_string(branch) + ".*-" + k.release +
           "$'), or remove the kernel: sudo apt-get purge linux-image-" + k.release;
  const std::string build = ValidName(dkms_version) && Version::Parse(dkms_version)
                                ? "sudo dkms install nvidia/" + dkms_version + " -k " + k.release
                                : "sudo dkms autoinstall -k " + k.release;
  return "sudo apt-get install linux-headers-" + k.release + " && " + build;
}

bool UsesDkms(const CheckInput& in) {
  if (in.host.driver.dkms_module || !in.stack.driver.signed_modules) return true;
  for (const auto& k : in.host.boot.kernels)
    if (!k.dkms_version.empty() || k.module_path.rfind("updates/dkms/", 0) == 0) return true;
  return false;
}

const char* Moved(const std::string& action) {
  if (action == "Upgrade") return "upgraded";
  if (action == "Downgrade") return "downgraded";
  if (action == "Reinstall") return "reinstalled";
  return "installed";
}

}  // namespace

std::string WhoMoved(const probe::AptRun& run) {
  if (!run.found()) return "";
  std::string date;  // apt writes two spaces between the date and the time
  for (char c : run.date)
    if (c != ' ' || date.empty() || date.back() != ' ') date += c;
  std::string out = std::string("apt ") + Moved(run.action) + " " + run.package + " " + run.version + " on " +
                    date +
                    (run.unattended ? ", run by unattended-upgrades" : ", not by unattended-upgrades") +
                    " (Commandline: " + run.commandline;
  if (!run.requested_by.empty()) out += "; Requested-By: " + run.requested_by;
  return out + "; " + run.where + ")";
}

void CheckKernels(const CheckInput& in, LayerReport& r) {
  const probe::BootInfo& boot = in.host.boot;
  if (!boot.probed) return;
  const int branch = in.stack.driver.branch;
  const std::string& userspace = in.host.driver.userspace_version;
  const bool dkms = UsesDkms(in);
  bool next_missing = false, next_judged = false;
  std::vector<std::string> not_judged;
  for (const auto& k : boot.kernels) {
    if (!k.modules_dep) {  // nothing to judge by: said once, below
      not_judged.push_back(k.release);
      continue;
    }
    next_judged = next_judged || k.release == boot.next_kernel;
    const std::string why = MissingWhy(k, branch, userspace);
    if (why.empty()) continue;
    const bool next = k.release == boot.next_kernel;
    next_missing = next_missing || next;
    const std::string fix = RebuildFix(k, dkms, branch, DkmsVersionFor(k, boot, userspace));
    const std::string who = k.installed_by.found() ? "; " + WhoMoved(k.installed_by) : "";
    if (dkms && !k.dkms_log.empty() && k.module_path.empty()) {
      r.Add("driver.dkms-build-failed", Status::kWarn,
            "DKMS failed to build nvidia " + k.dkms_version + " for kernel " + k.release +
                (k.dkms_error.empty() ? std::string(" (see ") + k.dkms_log + ")"
                                      : ": \"" + k.dkms_error + "\" (" + k.dkms_log + ")") +
                who,
            fix);
    } else {
      const std::string reason = dkms && !k.headers && k.module_path.empty()
                                     ? why + "; no headers for it, so DKMS cannot build one"
                                     : why;
      r.Add("driver.kernel-no-module", Status::kWarn,
            "installed kernel " + k.release + " has no nvidia module for this driver (" + reason +
                "): it would boot without the GPU driver" + who,
            fix);
    }
    if (next)
      r.Add("driver.next-boot-no-module", Status::kFail,
            "the next boot starts kernel " + k.release + " (" + boot.next_detail +
                "), which has no nvidia module for this driver",
            fix);
  }
  if (!not_judged.empty())
    r.Add("driver.kernel-not-judged", Status::kSkip,
          "no modules.dep listing modules, so not judged: kernel " + Join(not_judged, ", "));
  if (boot.next_kernel.empty())
    r.Add("driver.next-boot-unknown", Status::kSkip, "next boot: unknown (" + boot.next_detail + ")");
  else if (!next_judged)
    r.Add("driver.next-boot-unknown", Status::kSkip,
          "next boot: kernel " + boot.next_kernel + ", not judged");
  else if (!next_missing)
    r.Add("driver.next-boot", Status::kOk,
          "next boot: kernel " + boot.next_kernel + ", which has the module");
}

}  // namespace gp::layers
