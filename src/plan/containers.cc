#include "plan/containers.h"

#include <algorithm>

#include "util/strings.h"
#include "util/version.h"

namespace gp::plan {

std::optional<Version> DockerVersion(const std::string& text) {
  std::string up = text.find(':') != std::string::npos || text.find('-') != std::string::npos
                       ? DebVersion::Parse(text).upstream
                       : text;
  up = up.substr(0, up.find_first_of("-~+"));
  return Version::Parse(up);
}

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
    if (!p.version.empty() || !p.upstream.empty() || !upstream.empty()) {
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

std::string ToolkitRuntimeMode(const sys::Fs& fs) {
  auto text = fs.Read("/etc/nvidia-container-runtime/config.toml");
  if (!text) return "";
  bool in_section = false;
  for (const auto& raw : Split(*text, '\n')) {
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

}  // namespace gp::plan
