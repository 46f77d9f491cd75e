// The fast snapshot reader: simdjson's On-Demand API, one forward pass over the text, no document tree. Every
// value is visited and checked (strings unescaped, numbers parsed), as the reference's full parse would; the
// fields fleet-report shows are kept on the way. Anything unusual ends the pass with nullopt and the reference
// (snapshot_checked.cc) decides, so this file holds no error messages. simdjson stays private to this file.
#include "fleet/snapshot.h"

#if GPUPREP_SIMDJSON
#include <simdjson.h>

#include "fleet/snapshot_rules.h"
#include "probe/host_json.h"

namespace gp::fleet {

namespace od = simdjson::ondemand;

struct SnapshotReader::Impl {
  od::parser parser;
  std::string buffer;  // the text followed by simdjson's padding
};

namespace {

using Type = od::json_type;

// A field read where its meaning may depend on fields after it (a layer's detail and fix): its kind and text.
struct Kept {
  bool present = false, null = false, string = false;
  std::string text;
};

// The pass over one document, as static functions over simdjson's values: false means "not sure".
class Pass {
 public:
  // `v` and every value under it checked; `depth` is the nesting level of the container that holds `v` (the
  // root object is level 1, as the snapshot reader counts).
  static bool Skip(od::value v, int depth) {
    Type t;
    if (v.type().get(t)) return false;
    switch (t) {
      case Type::object: {
        if (depth + 1 > probe::kMaxSnapshotDepth) return false;
        od::object o;
        if (v.get_object().get(o)) return false;
        for (auto field : o) {
          std::string_view key;
          od::value child;
          if (field.unescaped_key().get(key) || field.value().get(child) || !Skip(child, depth + 1)) return false;
        }
        return true;
      }
      case Type::array: {
        if (depth + 1 > probe::kMaxSnapshotDepth) return false;
        od::array a;
        if (v.get_array().get(a)) return false;
        for (auto item : a) {
          od::value child;
          if (item.get(child) || !Skip(child, depth + 1)) return false;
        }
        return true;
      }
      case Type::string: {
        std::string_view s;
        return !v.get_string().get(s);
      }
      case Type::number: {
        od::number n;
        return !v.get_number().get(n);
      }
      case Type::boolean: {
        bool b;
        return !v.get_bool().get(b);
      }
      case Type::null: {
        bool null = false;
        return !v.is_null().get(null) && null;
      }
    }
    return false;
  }

  // Any value (held at nesting level `depth`) kept as Kept: a string's text, or only its kind (a non-string
  // is checked and skipped).
  static bool Keep(od::value v, Kept& k, int depth) {
    if (k.present) return false;  // a key given twice: the reference decides
    k.present = true;
    Type t;
    if (v.type().get(t)) return false;
    if (t == Type::null) {
      bool null = false;
      k.null = true;
      return !v.is_null().get(null) && null;
    }
    if (t != Type::string) return Skip(v, depth);
    std::string_view s;
    if (v.get_string().get(s) || s.size() > kMaxFieldBytes) return false;
    k.string = true;
    k.text.assign(s);
    return true;
  }

  static bool Root(od::document& doc, fleet::Host& h) {
    od::object root;
    if (doc.get_object().get(root)) return false;
    bool host = false, layers = false;
    Kept manifest;
    for (auto field : root) {
      std::string_view key;
      od::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) return false;
      if (key == "host") {
        if (host || !Host(v, h)) return false;
        host = true;
      } else if (key == "layers") {
        if (layers || !Layers(v, h)) return false;
        layers = true;
      } else if (key == "manifest") {
        if (!Keep(v, manifest, 1) || !(manifest.null || manifest.string)) return false;
      } else if (!Skip(v, 1)) {
        return false;
      }
    }
    h.manifest = std::move(manifest.text);
    const char* trailing = nullptr;
    return host && layers && doc.current_location().get(trailing) == simdjson::OUT_OF_BOUNDS;
  }

 private:
  static bool Host(od::value v, fleet::Host& h) {
    od::object o;
    if (v.get_object().get(o)) return false;
    Kept hostname, machine_id;
    bool os = false, gpus = false;
    for (auto field : o) {
      std::string_view key;
      od::value child;
      if (field.unescaped_key().get(key) || field.value().get(child)) return false;
      if (key == "hostname" || key == "machine_id") {
        Kept& k = key == "hostname" ? hostname : machine_id;
        if (!Keep(child, k, 2) || !(k.null || k.string)) return false;
      } else if (key == "os") {
        if (os || !Os(child, h)) return false;
        os = true;
      } else if (key == "gpus") {
        if (gpus || !Gpus(child, h)) return false;
        gpus = true;
      } else if (!Skip(child, 2)) {
        return false;
      }
    }
    h.hostname = std::move(hostname.text);
    h.machine_id = std::move(machine_id.text);
    return os && gpus;
  }

  static bool Os(od::value v, fleet::Host& h) {
    od::object o;
    if (v.get_object().get(o)) return false;
    Kept id, version;
    for (auto field : o) {
      std::string_view key;
      od::value child;
      if (field.unescaped_key().get(key) || field.value().get(child)) return false;
      if (key == "id" || key == "version_id") {
        if (!Keep(child, key == "id" ? id : version, 3)) return false;
      } else if (!Skip(child, 3)) {
        return false;
      }
    }
    if (!id.string || !version.string) return false;
    h.os = OsLabel(id.text, version.text);
    return true;
  }

  static bool Gpus(od::value v, fleet::Host& h) {
    od::array a;
    if (v.get_array().get(a)) return false;
    for (auto item : a) {
      od::object o;
      if (item.get_object().get(o)) return false;
      Kept pci, name, uuid, serial;
      for (auto field : o) {
        std::string_view key;
        od::value child;
        if (field.unescaped_key().get(key) || field.value().get(child)) return false;
        Kept* k = key == "pci" ? &pci : key == "name" ? &name : key == "uuid" ? &uuid : key == "serial" ? &serial : nullptr;
        if (k ? !Keep(child, *k, 4) : !Skip(child, 4)) return false;
      }
      if (!pci.string || !name.string || (uuid.present && !uuid.null && !uuid.string) ||
          (serial.present && !serial.null && !serial.string))
        return false;
      h.gpus.push_back({std::move(pci.text), std::move(name.text), std::move(uuid.text), std::move(serial.text)});
    }
    return true;
  }

  static bool Layers(od::value v, fleet::Host& h) {
    od::array a;
    if (v.get_array().get(a)) return false;
    for (auto item : a) {
      od::value layer;
      if (item.get(layer) || !Layer(layer, h)) return false;
    }
    return true;
  }

  struct FindingFields {
    Kept status, code, message, fix;
  };

  static bool Layer(od::value v, fleet::Host& h) {
    od::object o;
    if (v.get_object().get(o)) return false;
    Kept name, status, detail, fix;
    bool findings_seen = false;
    std::vector<FindingFields> findings;
    for (auto field : o) {
      std::string_view key;
      od::value child;
      if (field.unescaped_key().get(key) || field.value().get(child)) return false;
      if (key == "findings") {
        if (findings_seen || !Findings(child, findings)) return false;
        findings_seen = true;
        continue;
      }
      Kept* k = key == "name" ? &name : key == "status" ? &status : key == "detail" ? &detail : key == "fix" ? &fix : nullptr;
      if (k ? !Keep(child, *k, 3) : !Skip(child, 3)) return false;
    }
    if (!name.string || !KnownLayer(name.text) || !status.string || !ValidStatus(status.text)) return false;
    AddLayer(h, name.text, status.text);
    if (findings.empty()) {  // absent, null, [] or {}: the layer's detail and fix stand for its finding
      if (!Reported(status.text)) return true;
      if (!detail.string || !fix.present || !(fix.null || fix.string)) return false;
      h.findings.push_back({name.text, status.text, name.text + ".uncoded", std::move(detail.text), std::move(fix.text)});
      return true;
    }
    for (auto& f : findings) {
      if (!f.status.string || !ValidStatus(f.status.text)) return false;
      if (!Reported(f.status.text)) continue;
      if ((f.code.present && !f.code.null && !f.code.string) || !f.message.string || !f.fix.present ||
          !(f.fix.null || f.fix.string))
        return false;
      std::string code = f.code.text.empty() ? name.text + ".uncoded" : f.code.text;
      if (!ValidCode(code)) return false;
      h.findings.push_back(
          {name.text, std::move(f.status.text), std::move(code), std::move(f.message.text), std::move(f.fix.text)});
    }
    return true;
  }

  // A layer's findings: an array of objects (null and {} count as none; anything else is the reference's to
  // refuse).
  static bool Findings(od::value v, std::vector<FindingFields>& out) {
    Type t;
    if (v.type().get(t)) return false;
    if (t == Type::null) {
      bool null = false;
      return !v.is_null().get(null) && null;
    }
    if (t == Type::object) {
      od::object o;
      size_t n = 1;
      return !v.get_object().get(o) && !o.count_fields().get(n) && n == 0;
    }
    od::array a;
    if (t != Type::array || v.get_array().get(a)) return false;
    for (auto item : a) {
      od::object o;
      if (item.get_object().get(o)) return false;
      FindingFields f;
      for (auto field : o) {
        std::string_view key;
        od::value child;
        if (field.unescaped_key().get(key) || field.value().get(child)) return false;
        Kept* k = key == "status" ? &f.status : key == "code" ? &f.code : key == "message" ? &f.message
                  : key == "fix" ? &f.fix : nullptr;
        if (k ? !Keep(child, *k, 5) : !Skip(child, 5)) return false;
      }
      out.push_back(std::move(f));
    }
    return true;
  }
};

}  // namespace

SnapshotReader::SnapshotReader() : impl_(std::make_unique<Impl>()) {}
SnapshotReader::~SnapshotReader() = default;

std::optional<Host> SnapshotReader::ReadFast(const std::string& text) {
  if (text.size() > probe::kMaxSnapshotBytes) return std::nullopt;
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: read the text in place when its string has the
  // room (sys::Fs::Read leaves it), else from a copy with the room.
  const char* data = text.data();
  size_t room = text.capacity();
  if (room < text.size() + simdjson::SIMDJSON_PADDING) {
    std::string& buf = impl_->buffer;
    buf.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    buf.assign(text);
    data = buf.data();
    room = buf.capacity();
  }
  od::document doc;
  if (impl_->parser.iterate(data, text.size(), room).get(doc)) return std::nullopt;
  Host h;
  if (!Pass::Root(doc, h)) return std::nullopt;
  return h;
}

bool SnapshotReader::Fast() { return true; }

}  // namespace gp::fleet

#else  // built without simdjson (the portable .deb build): every snapshot goes to the reference reader

namespace gp::fleet {

struct SnapshotReader::Impl {};
SnapshotReader::SnapshotReader() : impl_(std::make_unique<Impl>()) {}
SnapshotReader::~SnapshotReader() = default;
std::optional<Host> SnapshotReader::ReadFast(const std::string&) { return std::nullopt; }
bool SnapshotReader::Fast() { return false; }

}  // namespace gp::fleet

#endif

namespace gp::fleet {

Host SnapshotReader::Read(const std::string& text, const std::string& display_path) {
  if (auto h = ReadFast(text)) {
    h->file = display_path;
    return std::move(*h);
  }
  return ReadSnapshotChecked(text, display_path);
}

}  // namespace gp::fleet
