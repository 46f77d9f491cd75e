#include "plan/containers.h"

#include <algorithm>

#include "util/strings.h"
#include "util/version.h"

namespace gp::plan {

std::string InstalledEngine(const PackageState& state) {
  for (const char* n : {"docker-ce", "docker.io", "moby-engine"}) {
    auto it = state.dpkg.find(n);
    if (it != state.dpkg.end() && it->second.installed) return it->second.version;
  }
  return "";
}

PackageDecision DecideContainerPackages(const PackageContext& ctx, const std::string& layer,
                                        const std::vector<manifest::AptPackage>& pkgs,
                                        const std::string& upstream, std::vector<std::string>& by_name) {
  std::vector<manifest::AptPackage> pinned;
  std::vector<std::string> missing;
  for (const auto& p : pkgs) {
    if (!p.NoVersion() || !upstream.empty()) {
      pinned.push_back(p);
      continue;
    }
    auto it = ctx.state->dpkg.find(p.name);
    if (it != ctx.state->dpkg.end() && it->second.installed) continue;
    by_name.push_back(p.name);
    missing.push_back(p.name);
  }
  PackageDecision out;
  if (!pinned.empty()) out = DecidePackages(ctx, layer, pinned, upstream);
  std::vector<std::string> parts;
  if (!missing.empty()) parts.push_back("missing: " + Join(missing, ", "));
  if (out.error.empty() && !out.detail.empty()) parts.push_back(out.detail);
  out.detail = Join(parts, "; ");
  return out;
}

}  // namespace gp::plan
