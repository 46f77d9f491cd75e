#include "launch/target.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "probe/host_json.h"

namespace gp::launch {

std::string Target::Describe() const { return from_snapshot ? "the host in " + snapshot_path : "this host"; }

Target TargetFromSnapshot(const std::string& text, const std::string& display_path) {
  Target t;
  t.host = probe::HostFromSnapshotText(text, display_path);  // validates the JSON and the host object
  t.from_snapshot = true;
  t.snapshot_path = display_path;
  const nlohmann::json doc = nlohmann::json::parse(text);
  if (auto m = doc.find("manifest"); m != doc.end() && m->is_string()) t.manifest = m->get<std::string>();
  if (auto layers = doc.find("layers"); layers != doc.end() && layers->is_array()) {
    for (const auto& l : *layers) {
      if (!l.is_object() || !l.contains("name") || !l["name"].is_string()) continue;
      LayerVerdict v;
      if (l.contains("status") && l["status"].is_string()) v.status = l["status"].get<std::string>();
      if (l.contains("found") && l["found"].is_string()) v.found = l["found"].get<std::string>();
      t.layers[l["name"].get<std::string>()] = v;
    }
  }
  return t;
}

std::optional<Version> HostDriverVersion(const Target& t) {
  for (const std::string* s : {&t.host.driver.module.version, &t.host.driver.userspace_version}) {
    if (auto v = Version::Parse(*s)) return v;
  }
  if (auto it = t.layers.find("driver"); it != t.layers.end()) return Version::Parse(it->second.found);
  return std::nullopt;
}

namespace {
bool LayerOk(const Target& t, const char* name) {
  auto it = t.layers.find(name);
  return it != t.layers.end() && (it->second.status == "ok" || it->second.status == "warn");
}
}  // namespace

bool HasNvidiaRuntime(const Target& t) {
  const auto& d = t.host.docker;
  if (std::find(d.runtimes.begin(), d.runtimes.end(), "nvidia") != d.runtimes.end()) return true;
  // Registered in /etc/docker/daemon.json (what a --root probe sees without contacting the engine).
  if (std::find(d.daemon_json_runtimes.begin(), d.daemon_json_runtimes.end(), "nvidia") !=
      d.daemon_json_runtimes.end())
    return true;
  if (t.host.toolkit.packages.count("nvidia-container-toolkit")) return true;
  // A snapshot without host.docker: the doctor verdicts stand in (docs/json.md).
  const bool docker_described = d.engine_reachable || !d.version.empty() || !d.runtimes.empty();
  return !docker_described && LayerOk(t, "docker") && LayerOk(t, "container_toolkit");
}

bool HasCdi(const Target& t) { return t.host.docker.cdi; }

}  // namespace gp::launch
