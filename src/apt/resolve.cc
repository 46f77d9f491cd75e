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

namespace {

// One closure walk: the versions chosen so far, the roots (never changed), what each requirer asks of each
// package, and the packages whose relations are still to be read.
struct ClosureWalk {
  const Index& index;
  const std::map<std::string, std::string>& installed;
  std::map<std::string, std::string> chosen;
  std::set<std::string> fixed;
  // relations[name][requirer] = what `requirer` (at its chosen version) asks of `name`
  std::map<std::string, std::map<std::string, std::vector<Relation>>> relations;
  std::deque<std::string> work;

  bool Allows(const std::string& name, const std::string& v);
  std::string Pick(const std::string& name);
  const Relation* Alternative(const Clause& clause);
  void FollowSoleProvider(const std::string& name, const Clause& clause);
  std::string Require(const std::string& name, const Relation& take);
  std::string Visit(const std::string& name);
};

// True when version `v` of `name` satisfies every relation on it read so far.
bool ClosureWalk::Allows(const std::string& name, const std::string& v) {
  for (const auto& [who, rs] : relations[name])
    for (const auto& r : rs)
      if (!Satisfies(v, r)) return false;
  return true;
}

// The version apt would take, with one refinement: where a relation leaves a choice (">= 580.95.05"), the
// version of the requirer's own release (the same upstream version) is preferred over a newer one, so a
// meta package pinned at a driver release gets that release's components, not the newest point release.
std::string ClosureWalk::Pick(const std::string& name) {
  const auto* list = index.Find(name);
  if (auto it = installed.find(name);
      it != installed.end() && index.Find(name, it->second) && Allows(name, it->second))
    return it->second;
  std::set<std::string> upstreams;
  for (const auto& [who, rs] : relations[name])
    if (auto c = chosen.find(who); c != chosen.end()) upstreams.insert(DebVersion::Parse(c->second).upstream);
  for (const auto& c : *list)
    if (Allows(name, c.version) && upstreams.count(DebVersion::Parse(c.version).upstream)) return c.version;
  // A lower bound (">= 13.0.88") names the component the requirer was built with: take the lowest version
  // that satisfies it (apt's newest would mix in a later release's components); no bound: the newest.
  bool lower_bound = false;
  for (const auto& [who, rs] : relations[name])
    for (const auto& r : rs) lower_bound = lower_bound || r.op == ">=" || r.op == ">>";
  if (lower_bound)
    for (auto it = list->rbegin(); it != list->rend(); ++it)
      if (Allows(name, it->version)) return it->version;
  for (const auto& c : *list)
    if (Allows(name, c.version)) return c.version;
  return "";
}

// The alternative of `clause` apt takes: one already chosen, else the first the index has; null when none.
const Relation* ClosureWalk::Alternative(const Clause& clause) {
  const Relation* take = nullptr;
  for (const auto& r : clause)
    if (chosen.count(r.name) && Satisfies(chosen[r.name], r)) take = &r;
  if (!take)
    for (const auto& r : clause)
      if (index.Find(r.name) && !IsKernelPackage(r.name)) {
        take = &r;
        break;
      }
  return take;
}

// A clause of `name` that names nothing the index has: a virtual package with exactly one provider in the
// index is that provider, which is then followed; anything else is outside the repository, apt's business.
void ClosureWalk::FollowSoleProvider(const std::string& name, const Clause& clause) {
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
        chosen[any.name] = Pick(any.name);
        work.push_back(any.name);
      }
      break;
    }
  }
}

// Records that `name` needs `take` and, where the version chosen so far does not satisfy it, chooses
// another and queues it; the error ("" when none) when no version can be chosen.
std::string ClosureWalk::Require(const std::string& name, const Relation& take) {
  relations[take.name][name].push_back(take);
  auto have = chosen.find(take.name);
  if (have != chosen.end() && Satisfies(have->second, take)) return "";
  if (fixed.count(take.name))
    return name + "=" + chosen[name] + " needs " + take.str() + " but the stack pins " + take.name + "=" +
           have->second;
  const std::string v = Pick(take.name);
  if (v.empty()) {
    std::vector<std::string> asks;
    for (const auto& [who, rs] : relations[take.name])
      for (const auto& r : rs) asks.push_back(who + " needs " + r.str());
    return "no version of " + take.name + " in the repository satisfies " + Join(asks, " and ");
  }
  chosen[take.name] = v;
  work.push_back(take.name);
  return "";
}

// Reads the relations of `name` at its chosen version and follows each; the first error, "" when none.
std::string ClosureWalk::Visit(const std::string& name) {
  const Candidate* c = index.Find(name, chosen[name]);
  if (!c) return "";
  for (auto& [dep, by] : relations) by.erase(name);  // this package's relations are re-read at its version
  for (const auto& clause : c->depends) {
    const Relation* take = Alternative(clause);
    if (!take) {
      FollowSoleProvider(name, clause);
      continue;  // a relation on something outside the repository: apt's business
    }
    if (IsKernelPackage(take->name)) continue;
    std::string error = Require(name, *take);
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace

Closure ComputeClosure(const Index& index, const std::map<std::string, std::string>& installed,
                       const std::vector<std::pair<std::string, std::string>>& roots) {
  Closure out;
  ClosureWalk walk{index, installed, {}, {}, {}, {}};
  for (const auto& [name, version] : roots) {
    if (!index.Find(name, version)) {
      out.error = name + "=" + version + ": not in the repository index";
      return out;
    }
    walk.chosen[name] = version;
    walk.fixed.insert(name);
    walk.work.push_back(name);
  }
  size_t steps = 0;
  while (!walk.work.empty()) {
    if (++steps > 100000) {
      out.error = "the dependency walk did not settle (a cycle of version changes in the repository index)";
      return out;
    }
    const std::string name = walk.work.front();
    walk.work.pop_front();
    out.error = walk.Visit(name);
    if (!out.error.empty()) return out;
  }
  for (const auto& [name, version] : walk.chosen) out.packages.emplace_back(name, version);
  return out;
}

}  // namespace gp::apt
