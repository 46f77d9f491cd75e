#include <set>

#include "apt/dpkg_status.h"
#include "layers/check.h"
#include "layers/fabricmanager/fabricmanager.h"
#include "probe/state.h"
#include "probe/steps.h"
#include "util/version.h"

namespace gp::layers {

namespace {

// NVML's NVLink fabric state on HGX Blackwell, the ground truth that Fabric Manager and NVLSM did their work:
// false (with a finding added) when it is not completed. Asked of NVML now when it answers (apply verifies
// after its own changes; the probe's answer is from before them). A fabric still coming up (not started, in
// progress: Fabric Manager trains the links for a while after it starts) is a warning to verify again, an
// error status a failure; appends to `ok` what was seen.
bool VerifyFabricState(const apply::VerifyEnv& env, LayerReport& r, std::string& ok) {
  std::vector<probe::Gpu> gpus = env.facts->gpus;
  if (env.native) {
    const sys::NvmlInfo nvml = env.native->Nvml({});
    if (nvml.loaded && !nvml.devices.empty()) {
      for (probe::Gpu& g : gpus) {
        g.fabric_state.clear();
        g.fabric_status.reset();
      }
      probe::AttachGpuIdentity(nvml.devices, gpus);
    }
  }
  int asked = 0, completed = 0;
  std::string pending, failed;
  for (const probe::Gpu& g : gpus) {
    if (g.fabric_state.empty() || g.fabric_state == "not-supported") continue;
    ++asked;
    if (g.fabric_state != "completed") {
      if (pending.empty()) pending = "GPU " + g.pci + ": " + g.fabric_state;
    } else if (g.fabric_status && *g.fabric_status != 0) {
      if (failed.empty()) failed = "GPU " + g.pci + ": NVML error " + std::to_string(*g.fabric_status);
    } else {
      ++completed;
    }
  }
  if (!failed.empty()) {
    r.Add(Status::kFail, "NVLink fabric registration failed (" + failed + ")",
          "journalctl -u nvidia-fabricmanager -b; then: sudo systemctl restart nvidia-fabricmanager");
    return false;
  }
  if (!pending.empty()) {
    r.Add(
        Status::kWarn,
        "NVLink fabric not completed yet (" + pending + "): CUDA reports the system not ready until it is",
        "wait a minute and run gpuprep verify again; if it stays so: journalctl -u nvidia-fabricmanager -b");
    return false;
  }
  ok += asked > 0 ? "; NVLink fabric completed on " + std::to_string(completed) + " GPU(s)"
                  : "; NVLink fabric state not read (NVML did not answer)";
  return true;
}

}  // namespace

// The fabric manager must be installed at exactly the loaded driver's version and enabled (on HGX Blackwell
// with the stack's fabric packages installed beside it, and NVML's fabric state completed). The
// version is read from dpkg now for the stack's pinned packages (apply may just have installed them), else
// taken from the probed facts; the stack's pin is never reported as what is installed.
void VerifyFabricManager(const apply::VerifyEnv& env, LayerReport& r) {
  const std::vector<manifest::AptPackage> pins = LayerPackagesFor(*env.stack, *env.facts);
  std::vector<manifest::AptPackage> held;  // the distribution's fabric packages by name are never pinned
  for (const auto& p : pins)
    if (!manifest::FabricPackage(p) || !p.NoVersion()) held.push_back(p);
  apply::PinsAndHolds(env, held, r);
  if (!NeedsFabricManager(*env.facts)) return r.Add(Status::kSkip, "no NVSwitch on this host");
  auto module = probe::LoadedModuleVersion(*env.fs);
  if (!module && env.facts->driver.module.loaded && !env.facts->driver.module.version.empty())
    module = env.facts->driver.module.version;
  std::string fix = pins.empty()
                        ? "install NVIDIA's fabric manager at the loaded driver's version" +
                              (module ? " (" + *module + ")" : std::string()) +
                              " (the stack pins no fabric manager package), then: sudo systemctl enable "
                              "--now nvidia-fabricmanager.service"
                        : verdict::ApplyFix("fabricmanager");
  if (module) r.wanted = *module;
  std::string name = "fabric manager", installed;
  if (!pins.empty()) {
    std::set<std::string> names;
    for (const auto& p : pins) names.insert(p.name);
    auto dpkg = apt::ReadDpkgStatus(*env.fs, names);
    for (const auto& p : pins) {
      auto it = dpkg.find(p.name);
      if (it == dpkg.end() || !it->second.installed)
        return r.Add(Status::kFail, p.name + " is not installed", fix);
      if (manifest::FabricPackage(p)) continue;  // versioned on its own (PinsAndHolds checked its pin)
      name = p.name;
      installed = DebVersion::Parse(it->second.version).upstream;
    }
  } else if (env.facts->fabricmanager.installed) {
    installed = DebVersion::Parse(env.facts->fabricmanager.version).upstream;
  }
  if (installed.empty()) return r.Add(Status::kFail, "no fabric manager is installed", fix);
  r.found = installed;
  if (!module)
    return r.Add(Status::kFail,
                 name + " " + installed + " is installed but no nvidia kernel module is loaded to match it",
                 "reboot (after gpuprep apply the resume unit finishes the setup), or: sudo modprobe nvidia");
  if (installed != *module)
    return r.Add(Status::kFail, name + " " + installed + " does not match the loaded driver " + *module, fix);
  if (!probe::UnitEnabled(*env.fs, "nvidia-fabricmanager.service"))
    return r.Add(Status::kFail, "nvidia-fabricmanager.service is not enabled",
                 "sudo systemctl enable --now nvidia-fabricmanager.service");
  std::string ok = "fabric manager " + installed + " installed, matches the loaded driver and is enabled";
  if (HgxBlackwell(*env.facts) && !VerifyFabricState(env, r, ok)) return;
  r.Add(Status::kOk, ok);
}

}  // namespace gp::layers
