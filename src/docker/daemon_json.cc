#include "docker/daemon_json.h"

#include <nlohmann/json.hpp>

#include "docker/json_tree.h"
#include "util/error.h"
#include "util/json_locator.h"
#include "util/json_scan.h"
#include "util/strings.h"

namespace gp::docker {
namespace {

using nlohmann::ordered_json;

// Offset of the value at `keys` (a member of the root object, then of that value...), the last of duplicate
// keys as the tree keeps it; where the path stops matching, the last value found. One scan per key, no tree
// and no map of every path (JsonLocator's would grow with depth times size).
size_t ValueOffset(const std::string& text, const std::vector<std::string>& keys) {
  size_t base = 0;
  for (const auto& key : keys) {
    JsonScanner s(std::string_view(text).substr(base), kMaxDaemonJsonDepth);
    if (s.Peek() != JsonScanner::Type::kObject || !s.EnterObject()) return base;
    std::optional<size_t> found;
    std::string_view k;
    while (s.NextKey(k)) {
      const bool match = k == key;
      s.Peek();
      if (match) found = s.Offset();
      if (!s.Skip()) break;
    }
    if (!found) return base;
    base += *found;
  }
  return base;
}

[[noreturn]] void FailAt(const std::string& text, const std::string& display_path,
                         const std::vector<std::string>& keys, const std::string& message) {
  auto [line, col] = LineColumnAt(text, ValueOffset(text, keys));
  throw FileError(display_path, line, col, message);
}

std::string Brief(const ordered_json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The object at `key` of `parent`, created when absent or null; throws when it is something else.
ordered_json& ObjectAt(ordered_json& parent, const std::string& key, const std::string& json_path,
                       const std::string& text, const std::string& display_path,
                       std::vector<std::string>& changes, bool& created) {
  created = false;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) {
    if (it != parent.end()) changes.push_back(json_path + ": null -> {}");
    parent[key] = ordered_json::object();
    created = true;
    return parent[key];
  }
  if (!it->is_object())
    FailAt(text, display_path, {key},
           "\"" + json_path + "\" is " + std::string(it->type_name()) +
               ", Docker expects an object; correct it by hand");
  return *it;
}

// Makes `runtimes` hold the wanted runtime: added when absent or null, its "path" pointed at the wanted
// binary when it names another (the entry's other keys stay); throws when the entry is not an object.
void SetRuntimeEntry(ordered_json& runtimes, const DaemonJsonWant& want, const std::string& text,
                     const std::string& display_path, std::vector<std::string>& changes) {
  const std::string rt_path = "runtimes." + want.runtime;
  auto rt = runtimes.find(want.runtime);
  if (rt == runtimes.end() || rt->is_null()) {
    runtimes[want.runtime] =
        ordered_json{{"path", want.runtime_path}, {"runtimeArgs", ordered_json::array()}};
    changes.push_back(rt_path + ": added (path " + want.runtime_path + ")");
  } else if (!rt->is_object()) {
    FailAt(text, display_path, {"runtimes", want.runtime},
           "\"" + rt_path + "\" is " + std::string(rt->type_name()) +
               ", Docker expects an object; correct it by hand");
  } else {
    auto path = rt->find("path");
    const bool ours = path != rt->end() && path->is_string() &&
                      (path->get<std::string>() == want.runtime_path ||
                       EndsWith(path->get<std::string>(), "/" + want.runtime_path));
    if (!ours) {
      changes.push_back(rt_path + ".path: " + (path == rt->end() ? "absent" : Brief(*path)) + " -> \"" +
                        want.runtime_path + "\"");
      (*rt)["path"] = want.runtime_path;  // runtimeArgs and any other key of the entry stay
    }
  }
}

// Makes features.cdi of `doc` the wanted value (the object created when absent); a change there needs
// the daemon restarted.
void SetCdiFeature(ordered_json& doc, bool cdi, const std::string& text, const std::string& display_path,
                   DaemonJsonEdit& r) {
  bool created = false;
  ordered_json& features = ObjectAt(doc, "features", "features", text, display_path, r.changes, created);
  auto c = features.find("cdi");
  if (c == features.end() || !c->is_boolean() || c->get<bool>() != cdi) {
    r.changes.push_back("features.cdi: " + (c == features.end() ? std::string("absent") : Brief(*c)) +
                        " -> " + (cdi ? "true" : "false"));
    features["cdi"] = cdi;
    r.restart_required = true;
  }
}

}  // namespace

DaemonJsonEdit EditDaemonJson(const std::optional<std::string>& current, const DaemonJsonWant& want,
                              const std::string& display_path) {
  const std::string text = current.value_or("");
  ordered_json doc = ordered_json::object();
  if (text.size() > kMaxDaemonJsonBytes || !Trim(text).empty()) {
    doc = ReadJsonTree(text, display_path);  // size and depth checked first
    if (!doc.is_object())
      throw FileError(display_path, 1, 1,
                      "Docker's configuration must be a JSON object, found " + std::string(doc.type_name()));
  }

  DaemonJsonEdit r;
  bool created = false;
  ordered_json& runtimes = ObjectAt(doc, "runtimes", "runtimes", text, display_path, r.changes, created);
  SetRuntimeEntry(runtimes, want, text, display_path, r.changes);

  if (want.default_runtime) {
    auto d = doc.find("default-runtime");
    if (d == doc.end() || !d->is_string() || d->get<std::string>() != want.runtime) {
      r.changes.push_back("default-runtime: " + (d == doc.end() ? std::string("absent") : Brief(*d)) +
                          " -> \"" + want.runtime + "\"");
      doc["default-runtime"] = want.runtime;
    }
  }

  if (want.cdi) SetCdiFeature(doc, *want.cdi, text, display_path, r);

  r.changed = !r.changes.empty();
  if (r.changed) {
    r.text = WriteJsonTree(doc) + "\n";
    // What gpuprep writes it must be able to read again (a compact file grows when it is indented).
    if (r.text.size() > kMaxDaemonJsonBytes)
      throw FileError(display_path, 1, 1,
                      "edited, the file would be " + std::to_string(r.text.size()) +
                          " bytes, more than the " + std::to_string(kMaxDaemonJsonBytes) +
                          " (1 MiB) gpuprep edits; gpuprep leaves the file as it is: shorten it by hand");
    r.diff = LineDiff(text, r.text);
  }
  return r;
}

}  // namespace gp::docker
