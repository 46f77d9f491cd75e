// CDI specs (Container Device Interface): nvidia.com/gpu specs under /etc/cdi, /var/run/cdi and the
// configured spec dirs, as nvidia-ctk writes them (YAML) or as JSON.
#include <nlohmann/json.hpp>

#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

std::string UnquoteYamlScalar(std::string_view v) {
  v = Trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  return std::string(v);
}

size_t Indent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

}  // namespace

CdiSpec ParseCdiSpec(std::string_view text, bool is_json) {
  CdiSpec spec;
  if (is_json) {
    auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return spec;
    if (auto k = j.find("kind"); k != j.end() && k->is_string()) spec.kind = k->get<std::string>();
    if (auto d = j.find("devices"); d != j.end() && d->is_array()) {
      for (const auto& dev : *d) {
        auto n = dev.is_object() ? dev.find("name") : dev.end();
        if (n != dev.end() && n->is_string()) spec.devices.push_back(spec.kind + "=" + n->get<std::string>());
      }
    }
    return spec;
  }
  // YAML as nvidia-ctk writes it: top-level "kind:" and a "devices:" list whose items carry "name:".
  std::vector<std::string> names;
  bool in_devices = false;
  size_t item_indent = std::string::npos;
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty() || Trim(line)[0] == '#') continue;
    size_t ind = Indent(line);
    std::string_view body = line.substr(ind);
    if (ind == 0 && body[0] != '-') {
      in_devices = StartsWith(body, "devices:");
      item_indent = std::string::npos;
      if (StartsWith(body, "kind:")) spec.kind = UnquoteYamlScalar(body.substr(5));
      continue;
    }
    if (!in_devices) continue;
    if (StartsWith(body, "- ")) {
      if (item_indent == std::string::npos) item_indent = ind;
      if (ind == item_indent) {
        body = body.substr(2);
        ind += 2;
        body = Trim(body);
      }
    }
    if (item_indent != std::string::npos && ind == item_indent + 2 && StartsWith(body, "name:")) {
      names.push_back(UnquoteYamlScalar(body.substr(5)));
    }
  }
  for (const auto& n : names) spec.devices.push_back(spec.kind + "=" + n);
  return spec;
}

bool ScanCdiSpecs(const sys::Fs& fs, const std::vector<std::string>& dirs,
                  std::vector<std::string>& devices) {
  bool nvidia_spec = false;
  std::vector<std::string> seen_dirs;
  for (const auto& dir : dirs) {
    bool dup = false;
    for (const auto& s : seen_dirs) dup = dup || s == dir;
    if (dup) continue;
    seen_dirs.push_back(dir);
    for (const auto& name : fs.List(dir)) {
      bool js = EndsWith(name, ".json");
      if (!js && !EndsWith(name, ".yaml") && !EndsWith(name, ".yml")) continue;
      auto text = fs.Read(dir + "/" + name);
      if (!text) continue;
      auto spec = ParseCdiSpec(*text, js);
      if (spec.kind != "nvidia.com/gpu") continue;
      nvidia_spec = true;
      for (const auto& dev : spec.devices) {
        bool have = false;
        for (const auto& x : devices) have = have || x == dev;
        if (!have) devices.push_back(dev);
      }
    }
  }
  return nvidia_spec;
}

}  // namespace gp::probe
