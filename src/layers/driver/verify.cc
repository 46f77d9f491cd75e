// driver's verify: the stack's packages held and pinned, the loaded kernel module at the pin, and NVML
// agreeing with it on the version and with PCI on the GPU count.
#include "apt/driver_names.h"
#include "layers/check.h"
#include "layers/driver/driver.h"
#include "probe/state.h"

namespace gp::layers {

void VerifyDriver(const apply::VerifyEnv& env, LayerReport& r) {
  // Whichever name each package is installed under (from R590 on the repository may publish either).
  apply::PinsAndHolds(env, apt::DriverPackageCandidates(env.stack->driver), r);
  const size_t pci = env.facts->gpus.size();
  r.wanted = apply::PinText(env.stack->driver.version);
  auto module = probe::LoadedModuleVersion(*env.fs);
  if (!module) {
    r.Add(Status::kFail, "no nvidia kernel module is loaded",
          "reboot (after gpuprep apply the resume unit finishes the setup), or: sudo modprobe nvidia");
    return;
  }
  r.found = *module;
  if (!r.wanted.empty() && *module != r.wanted)
    r.Add(Status::kFail, "the loaded kernel module is " + *module + " but the stack pins " + r.wanted,
          "sudo gpuprep apply --yes");
  if (!env.native) {
    if (r.status != Status::kFail) r.Add(Status::kOk, "kernel module " + *module + " is loaded");
    r.Add(Status::kSkip, "NVML not loaded (--root: nothing of the live host is loaded)");
    return;
  }
  auto nvml = env.native->Nvml({});
  if (!nvml.loaded) {
    r.Add(Status::kFail, "libnvidia-ml could not be loaded" + (nvml.error.empty() ? "" : ": " + nvml.error),
          verdict::ApplyFix("driver"));
    return;
  }
  if (!nvml.error.empty()) {
    r.Add(Status::kFail, "NVML: " + nvml.error,
          nvml.error.find("mismatch") != std::string::npos
              ? "reboot so the kernel module matches the libraries"
              : "gpuprep doctor");
    return;
  }
  if (nvml.driver_version && *nvml.driver_version != *module)
    r.Add(Status::kFail, "kernel module " + *module + " but NVML reports driver " + *nvml.driver_version,
          "reboot so the kernel module matches the libraries");
  const long count = nvml.device_count.value_or(-1);
  if (count != static_cast<long>(pci))
    r.Add(Status::kFail,
          "NVML counts " + std::to_string(count) + " GPUs but PCI shows " + std::to_string(pci),
          "gpuprep doctor (a GPU may have fallen off the bus; check dmesg for Xid errors)");
  if (r.status != Status::kFail)
    r.Add(Status::kOk, "kernel module and NVML agree on " + *module + "; NVML sees " + std::to_string(count) +
                           " of " + std::to_string(pci) + " GPUs");
}

}  // namespace gp::layers
