// The fast snapshot reader: one forward pass of util/json_scan.h over the text, no document tree. Every value
// is checked as the reference's full parse would check it (strings' UTF-8 and escapes, numbers, nesting), and
// the fields fleet-report shows are kept on the way as views into the text, decoded only when the reference
// would read them. Anything unusual ends the pass and the reference (snapshot_checked.cc) decides, so this
// file holds no error messages.
#include <string>
#include <utility>
#include <vector>

#include "fleet/snapshot.h"
#include "fleet/snapshot_rules.h"
#include "probe/host_json.h"
#include "util/json_scan.h"

namespace gp::fleet {
namespace {

using Type = JsonScanner::Type;

// A member read by name: whether it was given, null, or a string (as written, escapes undecoded).
struct Kept {
  bool present = false, null = false, string = false, escaped = false;
  std::string_view raw;
};

// The pass over one document. Each reader returns false for "not sure": the scanner's verdict then says
// whether the text is refused (kInvalid) or only unusual.
class Pass {
 public:
  explicit Pass(std::string_view text) : s_(text, probe::kMaxSnapshotDepth) {}

  bool Root(Host& h) {
    if (!s_.EnterObject()) return false;
    bool host = false, layers = false;
    Kept manifest;
    std::string_view key;
    while (s_.NextKey(key)) {
      bool ok;
      if (key == "host")
        ok = !std::exchange(host, true) && ReadHost(h);
      else if (key == "layers")
        ok = !std::exchange(layers, true) && ReadLayers(h);
      else if (key == "manifest")
        ok = Keep(manifest);
      else
        ok = s_.Skip();
      if (!ok) return false;
    }
    return s_.Finish() && host && layers && Optional(manifest, h.manifest);
  }

  JsonScanner::Verdict verdict() const { return s_.verdict(); }

 private:
  // The next value kept as `k`: a string's text, or only its kind (anything else checked and skipped).
  bool Keep(Kept& k) {
    if (k.present) return false;  // a key given twice: nlohmann keeps the last, the reference decides
    k.present = true;
    switch (s_.Peek()) {
      case Type::kNull:
        return (k.null = s_.Null());
      case Type::kString:
        return (k.string = s_.String(k.raw, k.escaped));
      default:
        return s_.Skip();
    }
  }

  // A string member the reference reads: decoded into `out`, within the field limit.
  static bool Text(const Kept& k, std::string& out) {
    if (!k.string) return false;
    out.clear();
    if (k.escaped)
      JsonScanner::Unescape(k.raw, out);
    else
      out.assign(k.raw);
    return out.size() <= kMaxFieldBytes;
  }
  // A member that may be absent or null ("" then).
  static bool Optional(const Kept& k, std::string& out) {
    if (!k.present || k.null) {
      out.clear();
      return true;
    }
    return Text(k, out);
  }
  // A member that must be given, as a string or null.
  static bool Nullable(const Kept& k, std::string& out) { return k.present && Optional(k, out); }

  // Members kept by name (`names[i]` into `kept[i]`) in the object that is the next value, the others checked
  // and skipped.
  template <size_t N>
  bool KeepMembers(const char* const (&names)[N], Kept (&kept)[N]) {
    if (!s_.EnterObject()) return false;
    std::string_view key;
    while (s_.NextKey(key)) {
      size_t i = 0;
      while (i < N && key != names[i]) ++i;
      if (!(i < N ? Keep(kept[i]) : s_.Skip())) return false;
    }
    return s_.ok();
  }

  bool ReadHost(Host& h) {
    if (!s_.EnterObject()) return false;
    Kept hostname, machine_id;
    bool os = false, gpus = false;
    std::string_view key;
    while (s_.NextKey(key)) {
      bool ok;
      if (key == "hostname")
        ok = Keep(hostname);
      else if (key == "machine_id")
        ok = Keep(machine_id);
      else if (key == "os")
        ok = !std::exchange(os, true) && ReadOs(h);
      else if (key == "gpus")
        ok = !std::exchange(gpus, true) && ReadGpus(h);
      else
        ok = s_.Skip();
      if (!ok) return false;
    }
    return s_.ok() && os && gpus && Optional(hostname, h.hostname) && Optional(machine_id, h.machine_id);
  }

  bool ReadOs(Host& h) {
    static const char* const kNames[] = {"id", "version_id"};
    Kept k[2];
    std::string id, version;
    if (!KeepMembers(kNames, k) || !Text(k[0], id) || !Text(k[1], version)) return false;
    h.os = OsLabel(id, version);
    return true;
  }

  bool ReadGpus(Host& h) {
    static const char* const kNames[] = {"pci", "name", "uuid", "serial"};
    if (!s_.EnterArray()) return false;
    while (s_.NextItem()) {
      Kept k[4];
      GpuId g;
      if (!KeepMembers(kNames, k) || !Text(k[0], g.pci) || !Text(k[1], g.name) || !Optional(k[2], g.uuid) ||
          !Optional(k[3], g.serial))
        return false;
      h.gpus.push_back(std::move(g));
    }
    return s_.ok();
  }

  bool ReadLayers(Host& h) {
    if (!s_.EnterArray()) return false;
    while (s_.NextItem())
      if (!ReadLayer(h)) return false;
    return s_.ok();
  }

  bool ReadLayer(Host& h) {
    if (!s_.EnterObject()) return false;
    Kept name, status, detail, fix;
    bool findings_seen = false;
    findings_.clear();
    std::string_view key;
    while (s_.NextKey(key)) {
      bool ok;
      if (key == "name")
        ok = Keep(name);
      else if (key == "status")
        ok = Keep(status);
      else if (key == "detail")
        ok = Keep(detail);
      else if (key == "fix")
        ok = Keep(fix);
      else if (key == "findings")
        ok = !std::exchange(findings_seen, true) && ReadFindings();
      else
        ok = s_.Skip();
      if (!ok) return false;
    }
    std::string layer, state;
    if (!s_.ok() || !Text(name, layer) || !KnownLayer(layer) || !Text(status, state) || !ValidStatus(state))
      return false;
    AddLayer(h, layer, state);
    if (findings_.empty()) {  // absent, null, [] or {}: the layer's detail and fix stand for its finding
      if (!Reported(state)) return true;
      HostFinding f{layer, state, layer + ".uncoded", "", ""};
      if (!Text(detail, f.message) || !Nullable(fix, f.fix)) return false;
      h.findings.push_back(std::move(f));
      return true;
    }
    for (size_t i = 0; i < findings_.size(); i += 4) {
      const Kept* k = &findings_[i];  // status, code, message, fix
      HostFinding f{layer, "", "", "", ""};
      if (!Text(k[0], f.status) || !ValidStatus(f.status)) return false;
      if (!Reported(f.status)) continue;
      if (!Optional(k[1], f.code) || !Text(k[2], f.message) || !Nullable(k[3], f.fix)) return false;
      if (f.code.empty()) f.code = layer + ".uncoded";
      if (!ValidCode(f.code)) return false;
      h.findings.push_back(std::move(f));
    }
    return true;
  }

  // A layer's findings, four Kept each into findings_: an array of objects; null and {} count as none;
  // anything else is the reference's to refuse.
  bool ReadFindings() {
    static const char* const kNames[] = {"status", "code", "message", "fix"};
    switch (s_.Peek()) {
      case Type::kNull:
        return s_.Null();
      case Type::kObject: {
        std::string_view key;
        return s_.EnterObject() && !s_.NextKey(key) && s_.ok();  // {} only
      }
      case Type::kArray:
        break;
      default:
        return false;
    }
    if (!s_.EnterArray()) return false;
    while (s_.NextItem()) {
      Kept k[4];
      if (!KeepMembers(kNames, k)) return false;
      findings_.insert(findings_.end(), k, k + 4);
    }
    return s_.ok();
  }

  JsonScanner s_;
  std::vector<Kept> findings_;  // the current layer's
};

}  // namespace

std::optional<Host> ReadSnapshotFast(std::string_view text, FastOutcome* outcome) {
  FastOutcome result = FastOutcome::kRefused;
  std::optional<Host> h;
  if (text.size() <= probe::kMaxSnapshotBytes) {
    Pass pass(text);
    h.emplace();
    if (pass.Root(*h)) {
      result = FastOutcome::kAnswered;
    } else {
      h.reset();
      result =
          pass.verdict() == JsonScanner::Verdict::kInvalid ? FastOutcome::kRefused : FastOutcome::kDeferred;
    }
  }
  if (outcome) *outcome = result;
  return h;
}

}  // namespace gp::fleet
