#include "plan/packages.h"

#include "probe/parsers.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::plan {

const std::string* PackageState::Installed(const std::string& name) const {
  auto it = installed.find(name);
  return it == installed.end() ? nullptr : &it->second;
}

bool PackageState::Held(const std::string& name) const {
  auto it = dpkg.find(name);
  return it != dpkg.end() && it->second.held;
}

PackageState PackageStateOf(const probe::DpkgDatabase& db, const std::optional<std::string>& preferences) {
  PackageState s;
  for (size_t i = 0; i < db.entries.size(); ++i) {
    const probe::DpkgEntry& e = db.entries[i];
    s.dpkg[e.package] = apt::EntryOf(e);
    // Installed: a valid name and version (what reaches apt's command line is validated, util/input.h) with
    // a Status ending in "ok installed"; of several architectures' stanzas, the highest version. A journal
    // record is newer than the status file: it replaces the package's version, or removes it.
    const bool installed =
        ValidDebName(e.package) && ValidDebVersion(e.version) && EndsWith(e.status, "ok installed");
    if (db.from_journal(i)) {
      if (installed)
        s.installed[e.package] = e.version;
      else
        s.installed.erase(e.package);
      continue;
    }
    if (!installed) continue;
    auto it = s.installed.find(e.package);
    if (it == s.installed.end())
      s.installed[e.package] = e.version;
    else if (CompareDebVersions(e.version, it->second) > 0)
      it->second = e.version;
  }
  if (preferences) {
    s.preferences = *preferences;
    s.pins = apt::ReadPins(*preferences);
  }
  return s;
}

apt::PinRule Rule(const manifest::AptPackage& p, const std::string& layer_version, bool cuda_builds,
                  const std::string& cuda) {
  apt::PinRule r;
  r.name = p.name;
  r.exact = p.version;
  r.upstream = p.upstream.empty() ? layer_version : p.upstream;
  if (cuda_builds) r.cuda = cuda;
  return r;
}

PackageDecision DecidePackages(const PackageContext& ctx, const std::string& layer,
                               const std::vector<manifest::AptPackage>& pkgs,
                               const std::string& layer_version, bool cuda_builds) {
  PackageDecision out;
  std::vector<std::string> missing, unheld;
  for (const auto& p : pkgs) {
    const apt::PinRule rule = Rule(p, layer_version, cuda_builds, ctx.cuda);
    const std::string* have = ctx.state->Installed(p.name);
    if (have && apt::MatchesPin(*have, rule)) {
      out.roots.push_back({layer, p.name, *have});
      if (!ctx.state->Held(p.name)) unheld.push_back(p.name);
      continue;
    }
    if (ctx.index) {
      auto res = apt::ResolvePin(*ctx.index, rule);
      if (!res.ok()) {
        out.error = res.error;
        return out;
      }
      out.roots.push_back({layer, p.name, res.version});
      out.install.push_back(p.name + "=" + res.version);
      missing.push_back(p.name + "=" + res.version);
    } else {
      out.needs_index = true;
      if (!rule.exact.empty()) {
        out.install.push_back(p.name + "=" + rule.exact);
        missing.push_back(p.name + "=" + rule.exact);
      } else {
        out.install.push_back(p.name + "=" + rule.upstream + "-*");
        missing.push_back(rule.str());
      }
    }
    if (have && ctx.state->Held(p.name)) out.allow_held = true;
  }
  std::vector<std::string> parts;
  if (!missing.empty()) parts.push_back("missing: " + Join(missing, ", "));
  if (!unheld.empty()) parts.push_back("not held: " + Join(unheld, ", "));
  out.detail = Join(parts, "; ");
  return out;
}

std::string FoundVersion(const PackageState& state, const std::vector<manifest::AptPackage>& pkgs) {
  for (const auto& p : pkgs)
    if (const std::string* v = state.Installed(p.name)) return *v;
  return "";
}

}  // namespace gp::plan
