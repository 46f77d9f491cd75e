#include "plan/host_state.h"

#include "apt/driver_names.h"

namespace gp::plan {

std::vector<std::string> RebootReasons(const HostState& host, const manifest::Stack& stack) {
  std::vector<std::string> reasons;
  if (host.reboot_required_file) reasons.push_back("/var/run/reboot-required exists");
  if (stack.driver.version.known() && !stack.driver.packages.empty()) {
    const auto& dpkg = host.packages.dpkg;
    auto has = [&](const std::string& name) {
      auto it = dpkg.find(name);
      return it != dpkg.end() && it->second.installed;
    };
    bool installed = true;
    for (const auto& p : apt::DriverPackages(stack.driver, has)) {
      auto it = dpkg.find(p.name);
      if (it == dpkg.end() || !it->second.installed ||
          (!p.version.empty() && it->second.version != p.version))
        installed = false;
    }
    if (installed) {
      const std::string want = stack.driver.version.version->str();
      if (!host.loaded_module)
        reasons.push_back("driver " + want + " is installed but no nvidia kernel module is loaded");
      else if (*host.loaded_module != want)
        reasons.push_back("driver " + want + " is installed but the loaded kernel module is " +
                          *host.loaded_module);
    }
  }
  if (host.nouveau_loaded && host.nouveau_blacklisted)
    reasons.push_back("nouveau is blacklisted but still loaded");
  return reasons;
}

}  // namespace gp::plan
