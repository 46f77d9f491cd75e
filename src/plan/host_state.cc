#include "plan/host_state.h"

#include <set>

#include "apt/dpkg_status.h"
#include "probe/parsers.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::plan {

std::optional<std::string> ParseNvrmVersion(const std::string& text) {
  auto m = probe::ParseNvrmVersion(text);  // both NVRM formats (probe/parsers.h)
  if (!m.loaded) return std::nullopt;
  return m.version;
}

std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs) {
  if (auto text = fs.ReadPrefix("/proc/driver/nvidia/version", 4096))
    if (auto v = ParseNvrmVersion(*text)) return v;
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
      auto text = fs.Read(std::string(dir) + "/" + name);
      if (text && probe::BlacklistsNouveau(*text)) return true;
    }
  }
  return false;
}

bool NouveauLoaded(const sys::Fs& fs) { return fs.Exists("/sys/module/nouveau"); }

bool UnitEnabled(const sys::Fs& fs, const std::string& unit) {
  const std::string dir = "/etc/systemd/system";
  for (const auto& name : fs.List(dir)) {
    if (!EndsWith(name, ".wants")) continue;
    const std::string link = dir + "/" + name + "/" + unit;
    if (fs.ReadLink(link) || fs.Exists(link)) return true;
  }
  return false;
}

std::vector<std::string> RebootReasons(const sys::Fs& fs, const manifest::Stack& stack) {
  std::vector<std::string> reasons;
  if (fs.Exists("/var/run/reboot-required")) reasons.push_back("/var/run/reboot-required exists");
  if (stack.driver.version.known() && !stack.driver.packages.empty()) {
    std::set<std::string> names;
    for (const auto& p : stack.driver.packages) names.insert(p.name);
    auto status = apt::ReadDpkgStatus(fs, names);
    bool installed = true;
    for (const auto& p : stack.driver.packages) {
      auto it = status.find(p.name);
      if (it == status.end() || !it->second.installed ||
          (!p.version.empty() && it->second.version != p.version))
        installed = false;
    }
    if (installed) {
      const std::string want = stack.driver.version.version->str();
      auto loaded = LoadedModuleVersion(fs);
      if (!loaded)
        reasons.push_back("driver " + want + " is installed but no nvidia kernel module is loaded");
      else if (*loaded != want)
        reasons.push_back("driver " + want + " is installed but the loaded kernel module is " + *loaded);
    }
  }
  if (NouveauLoaded(fs) && NouveauBlacklisted(fs))
    reasons.push_back("nouveau is blacklisted but still loaded");
  return reasons;
}

}  // namespace gp::plan
