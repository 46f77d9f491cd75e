#include "fleet/model.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "layers/report.h"
#include "probe/host_json.h"
#include "util/error.h"
#include "util/json_locator.h"

namespace gp::fleet {
namespace {

using nlohmann::json;

int Rank(const std::string& status) {
  if (status == "fail") return 3;
  if (status == "warn") return 2;
  if (status == "ok") return 1;
  return 0;
}

bool ValidStatus(const std::string& s) { return s == "ok" || s == "warn" || s == "fail" || s == "skip"; }

// A finding code as doctor writes it: "<layer>.<what>", lower-case letters, digits, '_', '-', '.'.
bool ValidCode(const std::string& c) {
  if (c.empty() || c.size() > 80) return false;
  for (char ch : c)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.'))
      return false;
  return true;
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : where_(text), path_(path) {}
  [[noreturn]] void Fail(const std::string& at, const std::string& message) const {
    auto [line, col] = where_.Find(at);
    throw FileError(path_, line, col, (at.empty() ? "" : at + ": ") + message);
  }
  std::string Str(const json& o, const std::string& at, const char* key, bool nullable) const {
    auto it = o.find(key);
    const std::string p = at + "." + key;
    if (it == o.end()) Fail(at, std::string("missing key \"") + key + "\"");
    if (it->is_null() && nullable) return "";
    if (!it->is_string()) Fail(p, nullable ? "expected a string or null" : "expected a string");
    std::string s = it->get<std::string>();
    if (s.size() > 4096) Fail(p, "longer than 4096 bytes");
    return s;
  }

 private:
  JsonLocator where_;
  std::string path_;
};

}  // namespace

Host ParseSnapshot(const std::string& text, const std::string& display_path) {
  // One parse, with the snapshot reader's size and depth limits and its path:line:col errors.
  const json doc = probe::ParseSnapshotJson(text, display_path);
  Reader r(text, display_path);
  if (!doc.is_object() || !doc.contains("layers") || !doc.contains("host"))
    r.Fail("", "not a gpuprep doctor --json document (no \"host\" and \"layers\")");
  probe::HostFacts facts = probe::HostFromSnapshot(doc, text, display_path);
  Host h;
  h.file = display_path;
  h.hostname = facts.hostname;
  h.machine_id = facts.machine_id;
  h.os = facts.os.id + (facts.os.version_id.empty() ? "" : " " + facts.os.version_id);
  if (doc.contains("manifest") && doc["manifest"].is_string())
    h.manifest = doc["manifest"].get<std::string>();
  for (const auto& g : facts.gpus) h.gpus.push_back({g.pci, g.name, g.uuid, g.serial});

  const json& layers = doc["layers"];
  if (!layers.is_array()) r.Fail("layers", "expected an array");
  h.worst = "ok";
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string at = "layers[" + std::to_string(i) + "]";
    const json& l = layers[i];
    if (!l.is_object()) r.Fail(at, "expected an object");
    const std::string name = r.Str(l, at, "name", false);
    const auto& known = layers::ReportNames();
    if (std::find(known.begin(), known.end(), name) == known.end())
      r.Fail(at + ".name", "unknown layer \"" + name + "\"");
    const std::string status = r.Str(l, at, "status", false);
    if (!ValidStatus(status)) r.Fail(at + ".status", "expected ok, warn, fail or skip");
    h.layers[name] = status;
    if (Rank(status) > Rank(h.worst)) h.worst = status;
    if (!l.contains("findings") || l["findings"].empty()) {
      // A document with only the documented layer keys (docs/json.md): the layer's detail and fix stand for its finding.
      if (status == "warn" || status == "fail")
        h.findings.push_back(
            {name, status, name + ".uncoded", r.Str(l, at, "detail", false), r.Str(l, at, "fix", true)});
      continue;
    }
    if (!l["findings"].is_array()) r.Fail(at + ".findings", "expected an array");
    for (size_t j = 0; j < l["findings"].size(); ++j) {
      const std::string fat = at + ".findings[" + std::to_string(j) + "]";
      const json& f = l["findings"][j];
      if (!f.is_object()) r.Fail(fat, "expected an object");
      const std::string fs = r.Str(f, fat, "status", false);
      if (!ValidStatus(fs)) r.Fail(fat + ".status", "expected ok, warn, fail or skip");
      if (fs != "warn" && fs != "fail") continue;
      std::string code = f.contains("code") ? r.Str(f, fat, "code", true) : "";
      if (code.empty()) code = name + ".uncoded";
      if (!ValidCode(code))
        r.Fail(fat + ".code", "not a finding code (lower-case letters, digits, '.', '-', '_')");
      h.findings.push_back({name, fs, code, r.Str(f, fat, "message", false), r.Str(f, fat, "fix", true)});
    }
  }
  return h;
}

Report BuildReport(std::vector<Host> hosts) {
  Report r;
  std::map<std::string, int> seen;
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

  std::map<std::string, size_t> index;
  for (const auto& h : hosts) {
    if (h.worst == "fail")
      ++r.failing;
    else if (h.worst == "warn")
      ++r.warning;
    else
      ++r.ok;
    for (const auto& f : h.findings) {
      auto [it, added] = index.try_emplace(f.code, r.groups.size());
      if (added) r.groups.push_back(Group{f.code, f.layer, f.status, {}, {}, {}});
      Group& g = r.groups[it->second];
      if (Rank(f.status) > Rank(g.status)) g.status = f.status;
      if (std::find(g.hosts.begin(), g.hosts.end(), h.label) == g.hosts.end()) g.hosts.push_back(h.label);
      if (g.messages.size() < 5 &&
          std::find(g.messages.begin(), g.messages.end(), f.message) == g.messages.end())
        g.messages.push_back(f.message);
      if (!f.fix.empty() && std::find(g.fixes.begin(), g.fixes.end(), f.fix) == g.fixes.end())
        g.fixes.push_back(f.fix);
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
