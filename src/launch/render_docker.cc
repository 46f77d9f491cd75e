// docker run argv and its shell rendering, plus the torchrun wrapper of the container command.
#include <string>

#include "launch/render.h"
#include "sys/process.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::launch {

std::string DockerSize(uint64_t bytes) {
  const std::pair<uint64_t, const char*> units[] = {
      {1ULL << 40, "t"}, {1ULL << 30, "g"}, {1ULL << 20, "m"}, {1ULL << 10, "k"}};
  for (const auto& [mult, suffix] : units)
    if (bytes >= mult && bytes % mult == 0) return std::to_string(bytes / mult) + suffix;
  return std::to_string(bytes);
}

namespace {

std::vector<std::string> GpuArgs(const RunConfig& c) {
  const GpuSelection& g = c.gpus;
  if (g.kind == GpuSelection::Kind::kNone) return {};
  if (c.access == GpuAccess::kCdi) {
    std::vector<std::string> out;
    if (g.kind == GpuSelection::Kind::kAll) return {"--device", "nvidia.com/gpu=all"};
    if (g.kind == GpuSelection::Kind::kCount)
      for (int i = 0; i < g.count; ++i)
        out.insert(out.end(), {"--device", "nvidia.com/gpu=" + std::to_string(i)});
    for (int i : g.indices) out.insert(out.end(), {"--device", "nvidia.com/gpu=" + std::to_string(i)});
    return out;
  }
  if (g.kind == GpuSelection::Kind::kAll) return {"--gpus", "all"};
  if (g.kind == GpuSelection::Kind::kCount) return {"--gpus", std::to_string(g.count)};
  std::vector<std::string> ids;
  for (int i : g.indices) ids.push_back(std::to_string(i));
  // docker reads --gpus as CSV: the comma list must be one quoted field (NVIDIA container toolkit docs,
  // "--gpus '\"device=0,1\"'").
  return {"--gpus", "\"device=" + Join(ids, ",") + "\""};
}

}  // namespace

std::vector<std::vector<std::string>> DockerArgvGroups(const RunConfig& c) {
  std::vector<std::vector<std::string>> g;
  g.push_back({"docker", "run", "--rm"});
  if (c.interactive) g.back().push_back("-it");
  if (!c.name.empty()) g.push_back({"--name", c.name});
  if (auto gpus = GpuArgs(c); !gpus.empty()) {
    for (size_t i = 0; i < gpus.size(); i += 2) g.push_back({gpus[i], gpus[i + 1]});
  }
  g.push_back({"--ipc=" + c.ipc});
  if (c.shm_bytes) g.back().push_back("--shm-size=" + DockerSize(*c.shm_bytes));
  std::vector<std::string> ul;
  for (const Ulimit& u : c.ulimits) {
    std::string v = std::to_string(u.soft);
    if (u.hard != u.soft) v += ":" + std::to_string(u.hard);
    ul.insert(ul.end(), {"--ulimit", u.name + "=" + v});
  }
  if (!ul.empty()) g.push_back(ul);
  if (!c.network.empty()) g.push_back({"--network=" + c.network});
  for (const std::string& d : c.devices) g.push_back({"--device", d});
  for (const std::string& cap : c.cap_add) g.push_back({"--cap-add", cap});
  for (const Mount& m : c.mounts) g.push_back({"-v", m.source + ":" + m.target + (m.read_only ? ":ro" : "")});
  for (const auto& [k, v] : c.env) g.push_back({"-e", k + "=" + v});
  for (const std::string& p : c.ports) g.push_back({"-p", p});
  if (!c.workdir.empty()) g.push_back({"-w", c.workdir});
  g.push_back({c.image});
  if (!c.command.empty()) g.push_back(c.command);
  return g;
}

std::vector<std::string> DockerArgv(const RunConfig& c) {
  std::vector<std::string> out;
  for (const auto& group : DockerArgvGroups(c)) out.insert(out.end(), group.begin(), group.end());
  return out;
}

std::string RenderDocker(const RunConfig& c) {
  std::string out;
  const auto groups = DockerArgvGroups(c);
  for (size_t i = 0; i < groups.size(); ++i) {
    if (i) out += " \\\n  ";
    out += sys::ShellJoin(groups[i]);
  }
  return out + "\n";
}

std::vector<std::string> TorchrunArgv(const RunConfig& c) {
  if (c.command.empty())
    throw FlagError("--format", "torchrun needs the training command after --, e.g. -- python train.py");
  std::vector<std::string> out = {"torchrun", "--nproc_per_node=" + std::to_string(c.gpus.Number())};
  if (c.multi.nodes > 1) {
    out.push_back("--nnodes=" + std::to_string(c.multi.nodes));
    out.push_back("--node_rank=" + std::to_string(c.multi.node_rank));
    out.push_back("--master_addr=" + c.multi.master_addr);
    out.push_back("--master_port=" + std::to_string(c.multi.master_port));
  }
  // torchrun [options] SCRIPT args... runs `python -u SCRIPT args...` per GPU, and [options] -m MODULE
  // args... runs `python -u -m MODULE args...`; its options all come before SCRIPT/MODULE. Any other python
  // option
  // (-c, -W, -X, -O...) has no torchrun spelling, so the command then runs as given under --no-python.
  const std::vector<std::string>& cmd = c.command;
  const std::string& first = cmd[0];
  const std::string base = first.substr(first.rfind('/') == std::string::npos ? 0 : first.rfind('/') + 1);
  const bool python =
      base.size() >= 6 && base.compare(0, 6, "python") == 0 &&
      base.find_first_not_of("0123456789.", 6) == std::string::npos;  // python, python3, python3.12
  auto is_option = [](const std::string& a) { return !a.empty() && a[0] == '-'; };
  size_t i = 0;
  bool direct = false;  // SCRIPT (or -m MODULE) goes straight after torchrun's options
  if (python) {
    i = 1;
    while (i < cmd.size() && cmd[i] == "-u") ++i;  // torchrun runs python unbuffered anyway
    if (i + 1 < cmd.size() && cmd[i] == "-m" && !is_option(cmd[i + 1])) {
      out.push_back("-m");
      ++i;
      direct = true;
    } else {
      direct = i < cmd.size() && !is_option(cmd[i]);
    }
    if (!direct) i = 0;
  } else {
    direct = EndsWith(first, ".py");
  }
  if (!direct) out.push_back("--no-python");
  out.insert(out.end(), cmd.begin() + static_cast<long>(i), cmd.end());
  return out;
}

std::string RenderTorchrun(const RunConfig& c) {
  if (c.bare) return sys::ShellJoin(TorchrunArgv(c)) + "\n";
  RunConfig inside = c;
  inside.command = TorchrunArgv(c);
  return RenderDocker(inside);
}

}  // namespace gp::launch
