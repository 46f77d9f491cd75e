#include "apt/resolve.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>

#include "util/strings.h"
#include "util/version.h"

namespace gp::apt {
namespace {

// The CUDA build a revision names: "1+cuda13.0" -> "13.0"; "" when none.
std::string CudaBuild(const std::string& version) {
  const std::string rev = DebVersion::Parse(version).revision;
  size_t p = rev.find("+cuda");
  if (p == std::string::npos) return "";
  size_t b = p + 5, e = b;
  while (e < rev.size() && (std::isdigit(static_cast<unsigned char>(rev[e])) || rev[e] == '.')) ++e;
  return rev.substr(b, e - b);
}

bool UpstreamMatches(const std::string& version, const PinRule& rule) {
  return DebVersion::Parse(version).upstream == rule.upstream;
}

}  // namespace

std::string PinRule::str() const {
  if (!exact.empty()) return name + "=" + exact;
  return name + " " + upstream + (cuda.empty() ? "" : " (+cuda" + cuda + ")");
}

bool MatchesPin(const std::string& version, const PinRule& rule) {
  if (!rule.exact.empty()) return version == rule.exact;
  if (rule.upstream.empty() || !UpstreamMatches(version, rule)) return false;
  const std::string build = CudaBuild(version);
  return build.empty() || rule.cuda.empty() || build == rule.cuda;
}

Resolution ResolvePin(const Index& index, const PinRule& rule) {
  const auto* list = index.Find(rule.name);
  if (!list || list->empty()) {
    std::string msg = rule.name + ": no such package in the repository";
    auto providers = index.Providers(rule.name);
    if (!providers.empty())
      msg += " (a virtual package provided by " + Join(providers, ", ") + ")";
    else if (auto guess = DidYouMean(rule.name, index.Names()))
      msg += " (did you mean " + *guess + "?)";
    return {"", msg};
  }
  if (!rule.exact.empty()) {
    for (const auto& c : *list)
      if (c.version == rule.exact) return {c.version, ""};
  }
  std::vector<const Candidate*> match;
  for (const auto& c : *list)  // highest first
    if (rule.exact.empty() && MatchesPin(c.version, rule)) match.push_back(&c);
  if (!match.empty() && rule.cuda.empty()) {
    std::set<std::string> builds;
    for (const auto* c : match) builds.insert(CudaBuild(c->version));
    if (builds.size() > 1) {
      std::vector<std::string> versions;
      versions.reserve(match.size());
      for (const auto* c : match) versions.push_back(c->version);
      return {"", rule.str() + ": ambiguous, the repository has builds for several CUDA versions (" +
                      Join(versions, ", ") + "); the stack names no CUDA version to choose"};
    }
  }
  if (!match.empty()) return {match.front()->version, ""};
  // Not there: name the closest versions on either side of the one wanted (dpkg order).
  const std::string want = rule.exact.empty() ? rule.upstream : rule.exact;
  const Candidate* below = nullptr;
  const Candidate* above = nullptr;
  for (const auto& c : *list) {
    if (!rule.cuda.empty() && !CudaBuild(c.version).empty() && CudaBuild(c.version) != rule.cuda) continue;
    const std::string up = rule.exact.empty() ? DebVersion::Parse(c.version).upstream : c.version;
    if (CompareDebVersions(up, want) < 0) {
      if (!below) below = &c;  // highest below: the list is highest first
    } else {
      above = &c;  // keeps moving to the lowest above
    }
  }
  std::vector<std::string> nearest;
  if (below) nearest.push_back(below->version);
  if (above) nearest.push_back(above->version);
  std::string msg = rule.name + " " + (rule.exact.empty() ? rule.upstream : "=" + rule.exact) +
                    (rule.cuda.empty() || !rule.exact.empty() ? "" : " built for CUDA " + rule.cuda) +
                    " is not in the repository";
  msg += nearest.empty()
             ? " (it has no version of it" + std::string(rule.cuda.empty() ? "" : " for that CUDA") + ")"
             : " (nearest: " + Join(nearest, ", ") + ")";
  return {"", msg};
}

bool IsKernelPackage(const std::string& name) {
  for (const char* p : {"linux-image-", "linux-headers-", "linux-modules-", "linux-generic", "linux-virtual",
                        "linux-signatures-", "linux-objects-"})
    if (StartsWith(name, p)) return true;
  return name == "linux-image" || name == "linux-headers";
}

Closure ComputeClosure(const Index& index, const std::map<std::string, std::string>& installed,
                       const std::vector<std::pair<std::string, std::string>>& roots) {
  Closure out;
  std::map<std::string, std::string> chosen;
  std::set<std::string> fixed;
  // relations[name][requirer] = what `requirer` (at its chosen version) asks of `name`
  std::map<std::string, std::map<std::string, std::vector<Relation>>> relations;
  std::deque<std::string> work;
  for (const auto& [name, version] : roots) {
    if (!index.Find(name, version)) {
      out.error = name + "=" + version + ": not in the repository index";
      return out;
    }
    chosen[name] = version;
    fixed.insert(name);
    work.push_back(name);
  }
  // The version apt would take, with one refinement: where a relation leaves a choice (">= 580.95.05"), the
  // version of the requirer's own release (the same upstream version) is preferred over a newer one, so a
  // meta package pinned at a driver release gets that release's components, not the newest point release.
  auto pick = [&](const std::string& name) -> std::string {
    const auto* list = index.Find(name);
    auto ok = [&](const std::string& v) {
      for (const auto& [who, rs] : relations[name])
        for (const auto& r : rs)
          if (!Satisfies(v, r)) return false;
      return true;
    };
    if (auto it = installed.find(name);
        it != installed.end() && index.Find(name, it->second) && ok(it->second))
      return it->second;
    std::set<std::string> upstreams;
    for (const auto& [who, rs] : relations[name])
      if (auto c = chosen.find(who); c != chosen.end())
        upstreams.insert(DebVersion::Parse(c->second).upstream);
    for (const auto& c : *list)
      if (ok(c.version) && upstreams.count(DebVersion::Parse(c.version).upstream)) return c.version;
    // A lower bound (">= 13.0.88") names the component the requirer was built with: take the lowest version
    // that satisfies it (apt's newest would mix in a later release's components); no bound: the newest.
    bool lower_bound = false;
    for (const auto& [who, rs] : relations[name])
      for (const auto& r : rs) lower_bound = lower_bound || r.op == ">=" || r.op == ">>";
    if (lower_bound)
      for (auto it = list->rbegin(); it != list->rend(); ++it)
        if (ok(it->version)) return it->version;
    for (const auto& c : *list)
      if (ok(c.version)) return c.version;
    return "";
  };
  size_t steps = 0;
  while (!work.empty()) {
    if (++steps > 100000) {
      out.error = "the dependency walk did not settle (a cycle of version changes in the repository index)";
      return out;
    }
    const std::string name = work.front();
    work.pop_front();
    const Candidate* c = index.Find(name, chosen[name]);
    if (!c) continue;
    for (auto& [dep, by] : relations) by.erase(name);  // this package's relations are re-read at its version
    for (const auto& clause : c->depends) {
      // The alternative apt takes: one already chosen, else the first the index has.
      const Relation* take = nullptr;
      for (const auto& r : clause)
        if (chosen.count(r.name) && Satisfies(chosen[r.name], r)) take = &r;
      if (!take)
        for (const auto& r : clause)
          if (index.Find(r.name) && !IsKernelPackage(r.name)) {
            take = &r;
            break;
          }
      if (!take) {
        // A virtual package with exactly one provider in the index is that provider.
        for (const auto& r : clause) {
          if (!r.op.empty() || IsKernelPackage(r.name)) continue;
          auto providers = index.Providers(r.name);
          bool have = false;
          for (const auto& p : providers) have = have || chosen.count(p);
          if (have) break;
          if (providers.size() == 1 && !IsKernelPackage(providers[0])) {
            Relation any;
            any.name = providers[0];
            relations[any.name][name].push_back(any);
            if (!chosen.count(any.name)) {
              chosen[any.name] = pick(any.name);
              work.push_back(any.name);
            }
            break;
          }
        }
        continue;  // a relation on something outside the repository: apt's business
      }
      if (IsKernelPackage(take->name)) continue;
      relations[take->name][name].push_back(*take);
      auto have = chosen.find(take->name);
      if (have != chosen.end() && Satisfies(have->second, *take)) continue;
      if (fixed.count(take->name)) {
        out.error = name + "=" + chosen[name] + " needs " + take->str() + " but the stack pins " +
                    take->name + "=" + have->second;
        return out;
      }
      const std::string v = pick(take->name);
      if (v.empty()) {
        std::vector<std::string> asks;
        for (const auto& [who, rs] : relations[take->name])
          for (const auto& r : rs) asks.push_back(who + " needs " + r.str());
        out.error = "no version of " + take->name + " in the repository satisfies " + Join(asks, " and ");
        return out;
      }
      chosen[take->name] = v;
      work.push_back(take->name);
    }
  }
  for (const auto& [name, version] : chosen) out.packages.emplace_back(name, version);
  return out;
}

}  // namespace gp::apt
