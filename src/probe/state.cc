// The host file facts the probe and the host's file half share (probe/state.h); the dpkg database is in
// dpkg.cc.
#include "probe/state.h"

#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {

KernelModule ReadLoadedModule(const sys::Fs& fs) {
  KernelModule m;
  if (auto text = fs.ReadPrefix("/proc/driver/nvidia/version", 4096)) m = ParseNvrmVersion(*text);
  if (!m.loaded) {
    if (auto text = fs.ReadPrefix("/sys/module/nvidia/version", 256); text && !Trim(*text).empty()) {
      m.loaded = true;
      m.version = std::string(Trim(*text));
    }
  }
  return m;
}

std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs) {
  KernelModule m = ReadLoadedModule(fs);
  return m.loaded ? std::optional<std::string>(m.version) : std::nullopt;
}

bool NouveauLoaded(const sys::Fs& fs) { return fs.Exists("/sys/module/nouveau"); }

bool RebootRequired(const sys::Fs& fs) {
  return fs.Exists("/run/reboot-required") || fs.Exists(VarRun(fs, "/reboot-required"));
}

bool NouveauBlacklisted(const sys::Fs& fs) {
  for (const char* dir : {"/etc/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d"}) {
    for (const auto& name : fs.List(dir)) {
      if (!EndsWith(name, ".conf")) continue;
      if (auto t = fs.Read(std::string(dir) + "/" + name); t && BlacklistsNouveau(*t)) return true;
    }
  }
  return false;
}

std::set<std::string> WantedUnits(const sys::Fs& fs) {
  const std::string dir = "/etc/systemd/system";
  std::set<std::string> out;
  for (const auto& name : fs.List(dir)) {
    if (!EndsWith(name, ".wants") && !EndsWith(name, ".requires")) continue;
    for (auto& unit : fs.List(dir + "/" + name)) out.insert(std::move(unit));
  }
  return out;
}

bool UnitEnabled(const sys::Fs& fs, const std::string& unit) { return WantedUnits(fs).count(unit) > 0; }

std::vector<std::string> ExperimentalToolkitLists(
    const std::map<std::string, std::optional<std::string>>& texts) {
  std::vector<std::string> out;
  for (const auto& [path, text] : texts) {
    if (!text) continue;
    for (const auto& line : Split(*text, '\n')) {
      std::string_view l = Trim(line);
      if (!l.empty() && l[0] != '#' && l.find("libnvidia-container/experimental") != std::string_view::npos) {
        out.push_back(path);
        break;
      }
    }
  }
  return out;
}

std::string ParseToolkitRuntimeMode(const std::string& config_toml) {
  bool in_section = false;
  for (const auto& raw : Split(config_toml, '\n')) {
    std::string line(Trim(raw));
    if (StartsWith(line, "[")) {
      in_section = line == "[nvidia-container-runtime]";
      continue;
    }
    if (!in_section || !StartsWith(line, "mode")) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line.substr(0, eq)) != "mode") continue;
    std::string v(Trim(line.substr(eq + 1)));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

}  // namespace gp::probe
