// The reference snapshot reader: the document parsed whole (nlohmann::json, through the snapshot reader's
// size, depth and number limits), then the fields fleet-report shows read with their types checked, each
// error pointing at its value's line and column.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fleet/snapshot.h"
#include "fleet/snapshot_rules.h"
#include "probe/host_json.h"
#include "util/error.h"
#include "util/json_locator.h"

namespace gp::fleet {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  [[noreturn]] void Fail(const std::string& at, const std::string& message) const {
    const JsonLocator where(text_);  // the positions are found only for an error
    auto [line, col] = where.Find(at);
    throw FileError(path_, line, col, (at.empty() ? "" : at + ": ") + message);
  }

  // The string member `key` of `o`; "" when absent (and not `required`) or null (and `nullable`).
  std::string Str(const json& o, const std::string& at, const char* key, bool required, bool nullable) const {
    auto it = o.find(key);
    const std::string p = at.empty() ? key : at + "." + key;
    if (it == o.end()) {
      if (required) Fail(at, std::string("missing key \"") + key + "\"");
      return "";
    }
    if (it->is_null() && nullable) return "";
    if (!it->is_string()) Fail(p, nullable ? "expected a string or null" : "expected a string");
    std::string s = it->get<std::string>();
    if (s.size() > kMaxFieldBytes) Fail(p, "longer than " + std::to_string(kMaxFieldBytes) + " bytes");
    return s;
  }

  const json& Member(const json& o, const std::string& at, const char* key, json::value_t type) const {
    auto it = o.find(key);
    if (it == o.end()) Fail(at, std::string("missing key \"") + key + "\"");
    const std::string p = at.empty() ? key : at + "." + key;
    if (it->type() != type)
      Fail(p, type == json::value_t::object ? "expected an object" : "expected an array");
    return *it;
  }

 private:
  const std::string& text_;
  std::string path_;
};

void ReadHost(const Reader& r, const json& doc, Host& h) {
  const json& host = doc["host"];
  if (!host.is_object()) r.Fail("host", "expected an object");
  h.hostname = r.Str(host, "host", "hostname", false, true);
  h.machine_id = r.Str(host, "host", "machine_id", false, true);
  const json& os = r.Member(host, "host", "os", json::value_t::object);
  const std::string id = r.Str(os, "host.os", "id", true, false);
  const std::string version = r.Str(os, "host.os", "version_id", true, false);
  h.os = OsLabel(id, version);
  const json& gpus = r.Member(host, "host", "gpus", json::value_t::array);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const std::string at = "host.gpus[" + std::to_string(i) + "]";
    if (!gpus[i].is_object()) r.Fail(at, "expected an object");
    h.gpus.push_back({r.Str(gpus[i], at, "pci", true, false), r.Str(gpus[i], at, "name", true, false),
                      r.Str(gpus[i], at, "uuid", false, true), r.Str(gpus[i], at, "serial", false, true)});
  }
}

void ReadLayer(const Reader& r, const json& l, const std::string& at, Host& h) {
  if (!l.is_object()) r.Fail(at, "expected an object");
  const std::string name = r.Str(l, at, "name", true, false);
  if (!KnownLayer(name)) r.Fail(at + ".name", "unknown layer \"" + name + "\"");
  const std::string status = r.Str(l, at, "status", true, false);
  if (!ValidStatus(status)) r.Fail(at + ".status", "expected ok, warn, fail or skip");
  AddLayer(h, name, status);
  auto findings = l.find("findings");
  if (findings == l.end() || findings->empty()) {
    // A document with only the documented layer keys (docs/json.md): the layer's detail and fix stand for
    // its finding.
    if (Reported(status))
      h.findings.push_back({name, status, name + ".uncoded", r.Str(l, at, "detail", true, false),
                            r.Str(l, at, "fix", true, true)});
    return;
  }
  if (!findings->is_array()) r.Fail(at + ".findings", "expected an array");
  for (size_t j = 0; j < findings->size(); ++j) {
    const std::string fat = at + ".findings[" + std::to_string(j) + "]";
    const json& f = (*findings)[j];
    if (!f.is_object()) r.Fail(fat, "expected an object");
    const std::string fs = r.Str(f, fat, "status", true, false);
    if (!ValidStatus(fs)) r.Fail(fat + ".status", "expected ok, warn, fail or skip");
    if (!Reported(fs)) continue;
    std::string code = r.Str(f, fat, "code", false, true);
    if (code.empty()) code = name + ".uncoded";
    if (!ValidCode(code))
      r.Fail(fat + ".code", "not a finding code (lower-case letters, digits, '.', '-', '_')");
    h.findings.push_back(
        {name, fs, code, r.Str(f, fat, "message", true, false), r.Str(f, fat, "fix", true, true)});
  }
}

}  // namespace

Host ReadSnapshotChecked(const std::string& text, const std::string& display_path) {
  const json doc = probe::ParseSnapshotJson(text, display_path);  // size, depth, numbers; errors point
  Reader r(text, display_path);
  if (!doc.is_object() || !doc.contains("layers") || !doc.contains("host"))
    r.Fail("", "not a gpuprep doctor --json document (no \"host\" and \"layers\")");
  Host h;
  h.file = display_path;
  ReadHost(r, doc, h);
  h.manifest = r.Str(doc, "", "manifest", false, true);
  const json& layers = doc["layers"];
  if (!layers.is_array()) r.Fail("layers", "expected an array");
  for (size_t i = 0; i < layers.size(); ++i) ReadLayer(r, layers[i], "layers[" + std::to_string(i) + "]", h);
  return h;
}

}  // namespace gp::fleet
