// The fast snapshot reader: simdjson's On-Demand API, one forward pass over the text, no document tree. Every
// value is visited and checked (strings unescaped, numbers parsed), as the reference's full parse would; the
// fields fleet-report shows are kept on the way. Anything unusual ends the pass with nullopt and the reference
// (snapshot_checked.cc) decides, so this file holds no error messages. simdjson stays private to this file.
#include "fleet/snapshot.h"

#if GPUPREP_SIMDJSON
#include <simdjson.h>

#include <utility>
#include <vector>

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
      case Type::object:
        return depth + 1 <= probe::kMaxSnapshotDepth &&
               Members(v, [depth](std::string_view, od::value child) { return Skip(child, depth + 1); });
      case Type::array:
        return depth + 1 <= probe::kMaxSnapshotDepth &&
               Items(v, [depth](od::value child) { return Skip(child, depth + 1); });
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
        if (layers || !Items(v, [&h](od::value layer) { return Layer(layer, h); })) return false;
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
  // each(key, value) for every member of the object `v`; false when `v` is not one or `each` says false.
  template <typename Each>
  static bool Members(od::value v, Each&& each) {
    od::object o;
    if (v.get_object().get(o)) return false;
    for (auto field : o) {
      std::string_view key;
      od::value child;
      if (field.unescaped_key().get(key) || field.value().get(child) || !each(key, child)) return false;
    }
    return true;
  }

  // each(value) for every element of the array `v`.
  template <typename Each>
  static bool Items(od::value v, Each&& each) {
    od::array a;
    if (v.get_array().get(a)) return false;
    for (auto item : a) {
      od::value child;
      if (item.get(child) || !each(child)) return false;
    }
    return true;
  }

  // Members kept by name (`names[i]` into `kept[i]`), the others checked and skipped; at nesting `depth`.
  template <size_t N>
  static bool KeepMembers(od::value v, const char* const (&names)[N], Kept (&kept)[N], int depth) {
    return Members(v, [&](std::string_view key, od::value child) {
      for (size_t i = 0; i < N; ++i)
        if (key == names[i]) return Keep(child, kept[i], depth);
      return Skip(child, depth);
    });
  }

  static bool StringOrNull(const Kept& k) { return !k.present || k.null || k.string; }

  static bool Host(od::value v, fleet::Host& h) {
    Kept hostname, machine_id;
    bool os = false, gpus = false;
    const bool ok = Members(v, [&](std::string_view key, od::value child) {
      if (key == "hostname" || key == "machine_id")
        return Keep(child, key == "hostname" ? hostname : machine_id, 2);
      if (key == "os") return !std::exchange(os, true) && Os(child, h);
      if (key == "gpus")
        return !std::exchange(gpus, true) && Items(child, [&h](od::value g) { return Gpu(g, h); });
      return Skip(child, 2);
    });
    if (!ok || !os || !gpus || !StringOrNull(hostname) || !StringOrNull(machine_id)) return false;
    h.hostname = std::move(hostname.text);
    h.machine_id = std::move(machine_id.text);
    return true;
  }

  static bool Os(od::value v, fleet::Host& h) {
    static const char* const kNames[] = {"id", "version_id"};
    Kept k[2];
    if (!KeepMembers(v, kNames, k, 3) || !k[0].string || !k[1].string) return false;
    h.os = OsLabel(k[0].text, k[1].text);
    return true;
  }

  static bool Gpu(od::value v, fleet::Host& h) {
    static const char* const kNames[] = {"pci", "name", "uuid", "serial"};
    Kept k[4];
    if (!KeepMembers(v, kNames, k, 4) || !k[0].string || !k[1].string || !StringOrNull(k[2]) ||
        !StringOrNull(k[3]))
      return false;
    h.gpus.push_back(
        {std::move(k[0].text), std::move(k[1].text), std::move(k[2].text), std::move(k[3].text)});
    return true;
  }

  static bool Layer(od::value v, fleet::Host& h) {
    static const char* const kNames[] = {"name", "status", "detail", "fix"};
    Kept k[4];
    Kept& name = k[0];
    Kept& status = k[1];
    bool findings_seen = false;
    std::vector<Kept> findings;  // per finding: status, code, message, fix
    const bool ok = Members(v, [&](std::string_view key, od::value child) {
      if (key == "findings") return !std::exchange(findings_seen, true) && Findings(child, findings);
      for (size_t i = 0; i < 4; ++i)
        if (key == kNames[i]) return Keep(child, k[i], 3);
      return Skip(child, 3);
    });
    if (!ok || !name.string || !KnownLayer(name.text) || !status.string || !ValidStatus(status.text))
      return false;
    AddLayer(h, name.text, status.text);
    if (findings.empty()) {  // absent, null, [] or {}: the layer's detail and fix stand for its finding
      if (!Reported(status.text)) return true;
      if (!k[2].string || !k[3].present || !StringOrNull(k[3])) return false;
      h.findings.push_back(
          {name.text, status.text, name.text + ".uncoded", std::move(k[2].text), std::move(k[3].text)});
      return true;
    }
    for (size_t f = 0; f < findings.size(); f += 4) {
      Kept* fk = &findings[f];
      if (!fk[0].string || !ValidStatus(fk[0].text)) return false;
      if (!Reported(fk[0].text)) continue;
      if (!StringOrNull(fk[1]) || !fk[2].string || !fk[3].present || !StringOrNull(fk[3])) return false;
      std::string code = fk[1].text.empty() ? name.text + ".uncoded" : fk[1].text;
      if (!ValidCode(code)) return false;
      h.findings.push_back(
          {name.text, std::move(fk[0].text), std::move(code), std::move(fk[2].text), std::move(fk[3].text)});
    }
    return true;
  }

  // A layer's findings, four Kept each (status, code, message, fix): an array of objects; null and {} count
  // as none; anything else is the reference's to refuse.
  static bool Findings(od::value v, std::vector<Kept>& out) {
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
    static const char* const kNames[] = {"status", "code", "message", "fix"};
    return Items(v, [&out](od::value f) {
      Kept k[4];
      if (!KeepMembers(f, kNames, k, 5)) return false;
      for (auto& one : k) out.push_back(std::move(one));
      return true;
    });
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
