// Fabric manager, NVLSM and persistence daemon (package, enabled unit, running process) and a pending reboot.
#include <set>

#include "probe/state.h"
#include "probe/steps.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

// Live only: pid of a process whose /proc/<pid>/comm is one of `names` (comm is cut at 15 characters).
std::map<std::string, std::string> RunningProcesses(const sys::Fs& fs,
                                                    const std::vector<std::string>& names) {
  std::map<std::string, std::string> found;
  for (const auto& pid : fs.List("/proc")) {
    if (pid.empty() || pid[0] < '1' || pid[0] > '9') continue;
    auto comm = fs.ReadPrefix("/proc/" + pid + "/comm", 64);
    if (!comm) continue;
    std::string c(Trim(*comm));
    for (const auto& n : names) {
      if (c == n.substr(0, 15) && !found.count(n)) found[n] = pid;
    }
    if (found.size() == names.size()) break;
  }
  return found;
}

}  // namespace

void ProbeServices(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  FabricManagerInfo& fm = facts.fabricmanager;
  for (const auto& [name, pkg] : facts.packages) {
    if (!StartsWith(name, "nvidia-fabricmanager-") || name.find("-dev") != std::string::npos) continue;
    std::string up = DebVersion::Parse(pkg.version).upstream;
    if (!fm.installed ||
        Version::Parse(up).value_or(Version()) > Version::Parse(fm.version).value_or(Version())) {
      fm.installed = true;
      fm.version = up;
    }
  }
  // Enabled: wanted by any target, the one rule the plan's reader of the host (state.h) uses too.
  const std::set<std::string> wanted = WantedUnits(fs);
  auto enabled = [&wanted](const char* unit) { return wanted.count(unit) > 0; };
  fm.enabled = enabled("nvidia-fabricmanager.service");

  // NVLSM: NVIDIA's package "nvlsm" (CUDA repository); its unit is named nvlsm.service or, in some
  // installations, nvidia-nvlsm.service; its process is "nvlsm".
  NvlsmInfo& sm = facts.fabric.nvlsm;
  if (const InstalledPackage* p = FindPackage(facts, "nvlsm")) {
    sm.installed = true;
    sm.version = DebVersion::Parse(p->version).upstream;
  }
  sm.enabled = enabled("nvlsm.service") || enabled("nvidia-nvlsm.service");

  DriverInfo& d = facts.driver;
  d.persistenced_enabled = enabled("nvidia-persistenced.service");
  d.persistenced_detail = d.persistenced_enabled ? "nvidia-persistenced.service enabled"
                                                 : "nvidia-persistenced.service not enabled";

  bool persistenced_installed = fs.Exists("/usr/bin/nvidia-persistenced");
  if (Live(env) && (fm.installed || sm.installed || persistenced_installed)) {
    auto running = RunningProcesses(fs, {"nv-fabricmanager", "nvidia-persistenced", "nvlsm"});
    fm.running = running.count("nv-fabricmanager") > 0;
    sm.running = running.count("nvlsm") > 0;
    if (auto it = running.find("nvidia-persistenced"); it != running.end()) {
      d.persistenced_running = true;
      d.persistenced_detail += ", running (pid " + it->second + ")";
    }
  }

  facts.reboot_required = RebootRequired(fs);
}

}  // namespace gp::probe
