#include <set>

#include "apt/dpkg_status.h"
#include "layers/check.h"
#include "layers/fabricmanager/fabricmanager.h"
#include "probe/state.h"
#include "util/version.h"

namespace gp::layers {

// The fabric manager must be installed at exactly the loaded driver's version and enabled (on HGX Blackwell
// with the stack's NVLSM installed beside it). The
// version is read from dpkg now for the stack's pinned packages (apply may just have installed them), else
// taken from the probed facts; the stack's pin is never reported as what is installed.
void VerifyFabricManager(const apply::VerifyEnv& env, LayerReport& r) {
  apply::PinsAndHolds(env, env.stack->driver.fabricmanager_packages, r);
  if (!NeedsFabricManager(*env.facts)) return r.Add(Status::kSkip, "no NVSwitch on this host");
  const auto& pins = env.stack->driver.fabricmanager_packages;
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
      const bool nvlsm = p.name == "nvlsm";  // its own version; needed on HGX Blackwell only
      if (nvlsm && !HgxBlackwell(*env.facts)) continue;
      auto it = dpkg.find(p.name);
      if (it == dpkg.end() || !it->second.installed)
        return r.Add(Status::kFail, p.name + " is not installed", fix);
      if (nvlsm) continue;
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
  r.Add(Status::kOk, "fabric manager " + installed + " installed, matches the loaded driver and is enabled");
}

}  // namespace gp::layers
