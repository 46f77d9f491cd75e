// The host files the planner reads beyond HostFacts (probe/state.h); the dpkg database is in dpkg.cc.
#include "probe/state.h"

#include "util/strings.h"

namespace gp::probe {

std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs) {
  if (auto text = fs.ReadPrefix("/proc/driver/nvidia/version", 4096)) {
    auto m = ParseNvrmVersion(*text);  // both NVRM formats
    if (m.loaded) return m.version;
  }
  if (auto text = fs.ReadPrefix("/sys/module/nvidia/version", 256)) {
    std::string v(Trim(*text));
    if (!v.empty()) return v;
  }
  return std::nullopt;
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
    if (!EndsWith(name, ".wants")) continue;
    for (auto& unit : fs.List(dir + "/" + name)) out.insert(std::move(unit));
  }
  return out;
}

bool UnitEnabled(const sys::Fs& fs, const std::string& unit) { return WantedUnits(fs).count(unit) > 0; }

std::vector<std::string> ExperimentalToolkitLists(const sys::Fs& fs) {
  std::vector<std::string> files = {"/etc/apt/sources.list"};
  for (const auto& name : fs.List("/etc/apt/sources.list.d"))
    if (EndsWith(name, ".list")) files.push_back("/etc/apt/sources.list.d/" + name);
  std::vector<std::string> out;
  for (const auto& path : files) {
    auto text = fs.Read(path);
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

std::string ToolkitRuntimeMode(const sys::Fs& fs) {
  auto text = fs.Read("/etc/nvidia-container-runtime/config.toml");
  return text ? ParseToolkitRuntimeMode(*text) : "";
}

}  // namespace gp::probe
