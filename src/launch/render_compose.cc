// docker compose file for the run config (docker/docs, compose/how-tos/gpu-support.md): GPUs through
// deploy.resources.reservations.devices (count or device_ids, capabilities [gpu]) or, on CDI hosts, CDI names
// in `devices`.
#include "launch/render.h"
#include "launch/template.h"

namespace gp::launch {
namespace {

// Compose interpolates "$VAR" in every value: "$$" is a literal '$'.
std::string Q(const std::string& s) {
  std::string escaped;
  for (char ch : s) escaped += ch == '$' ? std::string("$$") : std::string(1, ch);
  return YamlQuote(escaped);
}

std::string GpuBlock(const RunConfig& c) {
  const GpuSelection& g = c.gpus;
  if (g.kind == GpuSelection::Kind::kNone) return "";
  if (c.access == GpuAccess::kCdi) {
    std::string out = "devices:\n";
    if (g.kind == GpuSelection::Kind::kAll) return out + "  - \"nvidia.com/gpu=all\"";
    std::vector<int> ids = g.indices;
    for (int i = 0; g.kind == GpuSelection::Kind::kCount && i < g.count; ++i) ids.push_back(i);
    for (size_t i = 0; i < ids.size(); ++i)
      out += (i ? "\n" : "") + std::string("  - \"nvidia.com/gpu=") + std::to_string(ids[i]) + "\"";
    return out;
  }
  std::string sel;
  if (g.kind == GpuSelection::Kind::kAll)
    sel = "count: all";
  else if (g.kind == GpuSelection::Kind::kCount)
    sel = "count: " + std::to_string(g.count);
  else {
    sel = "device_ids: [";
    for (size_t i = 0; i < g.indices.size(); ++i)
      sel += (i ? ", " : "") + YamlQuote(std::to_string(g.indices[i]));
    sel += "]";
  }
  return "deploy:\n  resources:\n    reservations:\n      devices:\n        - driver: nvidia\n          " +
         sel + "\n          capabilities: [gpu]";
}

}  // namespace

std::string RenderCompose(const RunConfig& c) {
  std::map<std::string, std::string> v;
  v["comment"] = c.profile.empty() ? "" : " (profile " + c.profile + ")";
  v["service"] = c.name.empty() ? "train" : c.name;
  v["image"] = Q(c.image);
  v["container_name"] = c.name.empty() ? "" : "container_name: " + Q(c.name);
  v["interactive"] = c.interactive ? "stdin_open: true\ntty: true" : "";
  v["ipc"] = Q(c.ipc);
  v["shm_size"] = c.shm_bytes ? "shm_size: " + std::to_string(*c.shm_bytes) : "";
  v["network_mode"] = c.network.empty() ? "" : "network_mode: " + Q(c.network);
  std::string devices, caps;
  for (const std::string& d : c.devices) devices += "\n  - " + Q(d + ":" + d);
  for (const std::string& cap : c.cap_add) caps += "\n  - " + Q(cap);
  v["devices"] = devices.empty() ? "" : "devices:" + devices;
  v["cap_add"] = caps.empty() ? "" : "cap_add:" + caps;
  std::string ul;
  for (const Ulimit& u : c.ulimits) {
    ul += (ul.empty() ? "" : "\n") + u.name + ": ";
    ul += u.soft == u.hard ? std::to_string(u.soft)
                           : "{soft: " + std::to_string(u.soft) + ", hard: " + std::to_string(u.hard) + "}";
  }
  v["ulimits"] = ul;
  v["gpus"] = GpuBlock(c);
  std::string vols;
  for (const Mount& m : c.mounts)
    vols += "\n  - type: bind\n    source: " + Q(m.source) + "\n    target: " + Q(m.target) +
            (m.read_only ? "\n    read_only: true" : "");
  v["volumes"] = vols.empty() ? "" : "volumes:" + vols;
  std::string env;
  for (const auto& [k, val] : c.env) env += "\n  " + k + ": " + Q(val);
  v["environment"] = env.empty() ? "" : "environment:" + env;
  std::string ports;
  for (const std::string& p : c.ports) ports += "\n  - " + Q(p);
  v["ports"] = ports.empty() ? "" : "ports:" + ports;
  v["working_dir"] = c.workdir.empty() ? "" : "working_dir: " + Q(c.workdir);
  std::string cmd;
  for (const std::string& a : c.command) cmd += (cmd.empty() ? "" : ", ") + Q(a);
  v["command"] = c.command.empty() ? "" : "command: [" + cmd + "]";
  return ExpandTemplate(EmbeddedTemplate("compose.yaml.tmpl"), v);
}

}  // namespace gp::launch
