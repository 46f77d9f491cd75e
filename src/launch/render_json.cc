// `--format json`: the resolved config, where each value came from, and the exact docker argv.
#include <nlohmann/json.hpp>

#include "launch/render.h"
#include "util/error.h"

namespace gp::launch {

namespace {
nlohmann::json GpusJson(const GpuSelection& g) {
  static const char* kKinds[] = {"all", "count", "devices", "none"};
  return {{"kind", kKinds[static_cast<int>(g.kind)]}, {"count", g.Number()}, {"indices", g.indices}};
}
}  // namespace

std::string RenderJson(const RunConfig& c) {
  using nlohmann::json;
  json mounts = json::array();
  for (const Mount& m : c.mounts)
    mounts.push_back({{"source", m.source}, {"target", m.target}, {"read_only", m.read_only}});
  json env = json::array();
  for (const auto& [k, v] : c.env) env.push_back({{"name", k}, {"value", v}});
  json ulimits = json::array();
  for (const Ulimit& u : c.ulimits) ulimits.push_back({{"name", u.name}, {"soft", u.soft}, {"hard", u.hard}});
  json origins = json::object();
  for (const auto& [k, o] : c.origins) origins[k] = OriginName(o);
  json config = {
      {"image", c.image},
      {"gpus", GpusJson(c.gpus)},
      {"gpu_access", c.access == GpuAccess::kCdi ? "cdi" : "runtime"},
      {"ipc", c.ipc},
      {"shm_bytes", c.shm_bytes ? json(*c.shm_bytes) : json(nullptr)},
      {"host_shm_bytes", c.host_shm_bytes},
      {"ulimits", ulimits},
      {"mounts", mounts},
      {"env", env},
      {"ports", c.ports},
      {"devices", c.devices},
      {"cap_add", c.cap_add},
      {"workdir", c.workdir.empty() ? json(nullptr) : json(c.workdir)},
      {"network", c.network.empty() ? json(nullptr) : json(c.network)},
      {"name", c.name.empty() ? json(nullptr) : json(c.name)},
      {"interactive", c.interactive},
      {"command", c.command},
      {"nodes", c.multi.nodes},
      {"node_rank", c.multi.node_rank},
      {"master", c.multi.master_addr.empty()
                     ? json(nullptr)
                     : json(c.multi.master_addr + ":" + std::to_string(c.multi.master_port))},
      {"profile", c.profile.empty() ? json(nullptr) : json(c.profile)},
      {"stack", c.stack.empty() ? json(nullptr) : json(c.stack)},
  };
  json out = {
      {"config", config}, {"origins", origins}, {"docker_argv", DockerArgv(c)}, {"warnings", c.warnings}};
  if (!c.command.empty() && c.gpus.Number() > 0) out["torchrun_argv"] = TorchrunArgv(c);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string Render(const RunConfig& c, const std::string& format) {
  if (format == "docker") return RenderDocker(c);
  if (format == "json") return RenderJson(c);
  if (format == "compose") return RenderCompose(c);
  if (format == "torchrun") return RenderTorchrun(c);
  if (format == "slurm") return RenderSlurm(c);
  if (format == "k8s") return RenderK8s(c);
  throw FlagError("--format", "unknown format \"" + format + "\"");
}

}  // namespace gp::launch
