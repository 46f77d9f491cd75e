#include "fleet/model.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "fleet/snapshot.h"
#include "fleet/snapshot_rules.h"
#include "util/error.h"

namespace gp::fleet {

Host ParseSnapshot(const std::string& text, const std::string& display_path) {
  if (auto h = ReadSnapshotFast(text)) {
    h->file = display_path;
    return std::move(*h);
  }
  return ReadSnapshotChecked(text, display_path);  // the reference decides, and its errors point
}

Report BuildReport(std::vector<Host> hosts) {
  Report r;
  std::unordered_map<std::string, int> seen;
  for (auto& h : hosts) {
    const std::string base = h.file.substr(h.file.find_last_of('/') + 1);
    h.label = !h.hostname.empty() ? h.hostname : !h.machine_id.empty() ? h.machine_id.substr(0, 12) : base;
    ++seen[h.label];
  }
  for (auto& h : hosts)
    if (seen[h.label] > 1) h.label += " (" + h.file + ")";
  std::set<std::string> present;
  for (const auto& h : hosts)
    for (const auto& [name, status] : h.layers) present.insert(name);
  for (const auto& name : layers::ReportNames())
    if (present.count(name)) r.layers.push_back(name);

  // Per group, as it is built: the last host added (hosts come in order, so a host is added at most once) and
  // the fixes it holds (a fleet may bring thousands of distinct ones).
  struct Building {
    size_t last_host = ~size_t{0};
    std::unordered_set<std::string> fixes;
  };
  std::unordered_map<std::string, size_t> index;
  std::vector<Building> building;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const Host& h = hosts[i];
    if (h.worst == "fail")
      ++r.failing;
    else if (h.worst == "warn")
      ++r.warning;
    else
      ++r.ok;
    for (const auto& f : h.findings) {
      auto [it, added] = index.try_emplace(f.code, r.groups.size());
      if (added) {
        r.groups.push_back(Group{f.code, f.layer, f.status, {}, {}, {}});
        building.emplace_back();
      }
      Group& g = r.groups[it->second];
      Building& b = building[it->second];
      if (Rank(f.status) > Rank(g.status)) g.status = f.status;
      if (b.last_host != i) {
        g.hosts.push_back(h.label);
        b.last_host = i;
      }
      if (g.messages.size() < 5 &&
          std::find(g.messages.begin(), g.messages.end(), f.message) == g.messages.end())
        g.messages.push_back(f.message);
      if (!f.fix.empty() && b.fixes.insert(f.fix).second) g.fixes.push_back(f.fix);
    }
  }
  std::stable_sort(r.groups.begin(), r.groups.end(), [](const Group& a, const Group& b) {
    if (Rank(a.status) != Rank(b.status)) return Rank(a.status) > Rank(b.status);
    if (a.hosts.size() != b.hosts.size()) return a.hosts.size() > b.hosts.size();
    return a.code < b.code;
  });
  r.hosts = std::move(hosts);
  return r;
}

int ExitCodeFor(const Report& r) { return r.failing > 0 ? kExitFailed : kExitOk; }

}  // namespace gp::fleet
