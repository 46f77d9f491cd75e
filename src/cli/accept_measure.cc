#include "cli/accept_measure.h"

#include <dirent.h>

#include <ctime>
#include <fstream>
#include <functional>
#include <memory>

#include "accept/compose.h"
#include "accept/run_container.h"
#include "accept/run_host.h"
#include "accept/stream.h"
#include "apply/image_pull.h"
#include "apply/verify_container.h"
#include "cli/accept_burn_sampler.h"
#include "docker/engine.h"
#include "docker/image_ref.h"
#include "launch/nccl_env.h"
#include "launch/validate.h"
#include "sys/clock.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {

// The size of each local NVMe namespace (/sys/block/nvmeXnY/size, 512-byte sectors; controller paths such
// as nvme0c0n1 left out), live host only.
std::vector<uint64_t> NvmeBytes() {
  std::vector<uint64_t> out;
  DIR* d = ::opendir("/sys/block");
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("nvme", 0) != 0 || name.find('c') != std::string::npos ||
        name.find('n', 4) == std::string::npos)
      continue;
    std::ifstream f("/sys/block/" + name + "/size");
    unsigned long long sectors = 0;
    if (f >> sectors && sectors > 0 && sectors < (1ull << 53)) out.push_back(sectors * 512);
  }
  ::closedir(d);
  return out;
}

std::string Topology(const probe::HostFacts& f) {
  if (f.nvswitch_count > 0) return "nvswitch";
  for (const auto& g : f.gpus)
    if (g.health.nvlinks && *g.health.nvlinks > g.health.nvlinks_down.size()) return "nvlink-bridge";
  return "pcie";
}

std::vector<accept::HostGpu> GpusOf(const probe::HostFacts& f) {
  std::vector<accept::HostGpu> out;
  for (const auto& g : f.gpus) {
    if (!g.nvml_status || *g.nvml_status != 0) continue;  // only the GPUs NVML answers for are measured
    accept::HostGpu h;
    h.index = static_cast<int>(out.size());
    h.uuid = g.uuid;
    h.serial = g.serial;
    h.name = g.name;
    h.pci_device_id = g.device_id;
    h.memory_total_mib = g.memory_bytes.value_or(0) >> 20;
    h.pcie_max_gen = accept::PcieGen(g.pcie.max_speed.value_or(0));
    h.pcie_max_width = g.pcie.max_width.value_or(0);
    h.upstream_max_gen = accept::PcieGen(g.pcie.port_max_speed.value_or(0));
    if (g.health.nvlinks && *g.health.nvlinks > 0)
      h.nvlink_links_up = static_cast<int>(*g.health.nvlinks - g.health.nvlinks_down.size());
    if (g.fabric_state == "completed")
      h.fabric_complete = g.fabric_status.value_or(-1) == 0;
    else if (g.fabric_state == "not-started" || g.fabric_state == "in-progress")
      h.fabric_complete = false;
    out.push_back(h);
  }
  return out;
}

accept::Check ProgramCheck(const accept::ProgramFinding& f) {
  accept::Check c;
  c.group = "program";
  c.name = f.phase.empty() ? "measurement program" : f.phase;
  c.gpu = f.gpu.value_or(-1);
  c.status = accept::Status::kFail;
  c.reason = TerminalSafe(f.what);
  return c;
}

// Runs the measurement program through `run` (given the python to start it with, and the stream) and
// composes the recording.
using ProgramRunner =
    std::function<accept::ProgramEnd(const std::vector<std::string>& argv, accept::ProgramStream&)>;

// What the recording says of the host: its name, driver, stack, topology, CPUs, RAM and NVMe.
accept::HostRun HostRunOf(const Target& t) {
  const probe::HostFacts& f = t.facts;
  accept::HostRun run;
  run.started_at = sys::NowUtc();
  run.host = f.hostname.empty() ? "unknown" : f.hostname;
  run.driver_version =
      f.driver.userspace_version.empty() ? f.driver.module.version : f.driver.userspace_version;
  run.stack = t.stack.name;
  run.topology = Topology(f);
  run.cpus = f.cpus;
  run.ram_bytes = f.memory_bytes;
  run.nvme_bytes = NvmeBytes();
  return run;
}

// The longest the program may run for this plan.
std::chrono::seconds PlanBudget(const MeasurePlan& plan) {
  return plan.nodes ? accept::NodesRunBudget(plan.fast) : accept::RunBudget(plan.fast, plan.burn);
}

// This node's RDMA ports as the nodes record lists them (the rate's leading number: "400 Gb/sec (4X NDR)").
std::vector<accept::NodePort> NodePorts(const probe::NetworkInfo& n) {
  std::vector<accept::NodePort> out;
  for (const auto& d : n.rdma)
    for (const auto& p : d.ports) {
      accept::NodePort np{d.name, p.number, p.link_layer, 0, p.state};
      char* end = nullptr;
      const double rate = std::strtod(p.rate.c_str(), &end);
      if (end != p.rate.c_str() && rate > 0 && rate < 1e6) np.rate_gbps = rate;
      out.push_back(std::move(np));
    }
  return out;
}

// One NCCL variable for the check across nodes: the user's own value wins (and is said), else gpuprep's.
void SetNcclVar(Context& ctx, std::map<std::string, std::string>& env, const std::string& name,
                const std::string& value, const std::string& why) {
  if (const auto own = ctx.env.find(name); own != ctx.env.end()) {
    env[name] = own->second;
    if (!ctx.opts.quiet)
      *ctx.err << "gpuprep: accept: " << name << "=" << TerminalSafe(own->second)
               << " from your environment (gpuprep would set " << TerminalSafe(value) << ": " << why << ")\n";
    return;
  }
  env[name] = value;
  if (!ctx.opts.quiet)
    *ctx.err << "gpuprep: accept: " << name << "=" << TerminalSafe(value) << " (" << why << ")\n";
}

// The program's environment: ProgramEnv, and for the check across nodes NCCL's log (NCCL_DEBUG=INFO, which
// the judgement reads) and the network variables `gpuprep launch` would give this node's command.
std::map<std::string, std::string> RunEnv(Context& ctx, const Target& t, const MeasurePlan& plan) {
  std::map<std::string, std::string> env = accept::ProgramEnv(plan.burn.count() > 0);
  if (!plan.nodes) return env;
  env["NCCL_DEBUG"] = "INFO";
  const launch::LocalNet local = launch::ReadLocalNet(launch::ParseMaster(plan.nodes->master).first);
  if (!local.route_ifname.empty())
    SetNcclVar(ctx, env, "NCCL_SOCKET_IFNAME", "=" + local.route_ifname,
               "the interface this host's kernel routes the master's address through");
  else
    SetNcclVar(ctx, env, "NCCL_SOCKET_IFNAME", launch::kSocketIfnameExclude,
               "the interface toward the master is not known: " + local.why_not);
  if (const std::string hca = launch::IbHcaValue(t.facts.network); !hca.empty())
    SetNcclVar(ctx, env, "NCCL_IB_HCA", hca, "this node's ACTIVE InfiniBand and RoCE ports, exactly");
  const launch::NetChoice net = launch::NcclNetValue(t.facts.network);
  SetNcclVar(ctx, env, "NCCL_NET", net.value, net.why + "; NCCL cannot fall back to another network");
  // On two nodes NCCL's tree can pass the network's own bandwidth (NVIDIA/nccl-tests#196, NVIDIA's answer:
  // force NCCL_ALGO=RING to measure the network); the ring's bus bandwidth is bounded by the ports.
  SetNcclVar(ctx, env, "NCCL_ALGO", "Ring",
             "the ring's bus bandwidth is bounded by the network, as the floor is");
  return env;
}

// The nodes record of a check across nodes: the plan, the NCCL variables it ran with, this node's ports.
accept::NodesInfo NodesInfoOf(const Target& t, const accept::NodesRun& n,
                              const std::map<std::string, std::string>& env) {
  accept::NodesInfo info;
  info.nnodes = n.nnodes;
  info.node_rank = n.node_rank;
  info.master = n.master;
  for (const auto& [k, v] : env)
    if (k.rfind("NCCL_", 0) == 0) info.env.emplace_back(k, v);
  info.ports = NodePorts(t.facts.network);
  return info;
}

// What the user sees as a phase starts.
void SayPhase(std::ostream& err, const MeasurePlan& plan, int gpus, const std::string& phase,
              std::chrono::seconds budget) {
  if (plan.nodes)
    err << "gpuprep: accept: node " << plan.nodes->node_rank << " of " << plan.nodes->nnodes
        << ": waiting up to " << accept::kRendezvous.count() << " s for every node at " << plan.nodes->master
        << ", then one all-reduce over all their GPUs (up to " << budget.count() << " s in all)\n";
  else
    err << "gpuprep: accept: measuring " << phase << " on " << gpus << " GPU(s) (up to " << budget.count()
        << " s)\n";
}

// How the program ended: a container left behind is named; no start or an interruption ends the command.
void CheckEnd(Context& ctx, const accept::ProgramEnd& end) {
  if (!end.left.empty())
    *ctx.err << "gpuprep: accept: container " << end.left.substr(0, 12)
             << " could not be removed; remove it with: docker rm -f " << end.left.substr(0, 12) << "\n";
  if (!end.started) throw Error(kExitFailed, "accept: " + TerminalSafe(end.error) + "; nothing was measured");
  if (end.interrupted)
    throw Error(kExitFailed, "accept: interrupted; the measurement was stopped and nothing was judged");
}

Measured Measure(Context& ctx, const Target& t, const MeasurePlan& plan, const std::string& python,
                 const std::map<std::string, std::string>& env, const ProgramRunner& run_program) {
  const std::vector<accept::HostGpu> gpus = GpusOf(t.facts);
  if (gpus.empty()) throw Error(kExitFailed, "accept: NVML reports no GPU to measure");
  accept::HostRun run = HostRunOf(t);

  const int n = static_cast<int>(gpus.size());
  const auto sizes =
      accept::AllReduceSizes(accept::EmbeddedTable(), gpus.front().pci_device_id, n, run.topology);
  accept::ProgramStream stream(n, plan.fast);
  stream.SetBurn(plan.burn);
  if (plan.nodes) stream.KeepNcclLines();
  // watch's sampler reads every GPU while the burn runs (not while the other phases measure).
  std::unique_ptr<BurnSampler> sampler;
  if (plan.burn.count() > 0) sampler = std::make_unique<BurnSampler>(ctx, n);
  stream.on_phase = [&](const std::string& phase, std::chrono::seconds budget) {
    if (phase == "burn" && sampler) sampler->Burning();
    if (!ctx.opts.quiet) SayPhase(*ctx.err, plan, n, phase, budget);
  };
  const accept::ProgramEnd end =
      run_program(plan.nodes ? accept::NodesProgramArgv(python, n, plan.fast, *plan.nodes)
                             : accept::ProgramArgv(python, n, plan.fast, sizes, plan.burn),
                  stream);
  CheckEnd(ctx, end);
  run.finished_at = sys::NowUtc();

  Measured m;
  std::vector<std::string> lines = stream.PhaseLines();
  if (plan.nodes) {
    for (auto& l : accept::NodesLines(NodesInfoOf(t, *plan.nodes, env), stream.NcclLines()))
      lines.push_back(std::move(l));
    if (stream.NcclLinesDropped() > 0 && !ctx.opts.quiet)
      *ctx.err << "gpuprep: accept: NCCL's log past its first " << accept::kMaxNcclLines
               << " lines was not kept (" << stream.NcclLinesDropped() << " more)\n";
  }
  if (sampler) {
    sampler->Stop();
    for (auto& l : sampler->Lines()) lines.push_back(std::move(l));
    if (!sampler->Error().empty()) {
      accept::Check c;
      c.group = "burn";
      c.name = "clocks";
      c.status = accept::Status::kSkipped;
      c.reason = "the clocks were not read during the burn: " + TerminalSafe(sampler->Error());
      m.program_checks.push_back(c);
    }
  }
  m.text = accept::ComposeRecording(run, gpus, lines);
  try {
    m.recording = accept::ParseRecording(m.text, "the measurement program's output");
  } catch (const FileError& e) {
    throw Error(kExitFailed,
                std::string("accept: the measurement program wrote an invalid record: ") + e.what());
  }
  for (const auto& finding : stream.Findings()) m.program_checks.push_back(ProgramCheck(finding));
  return m;
}

// Pulls the stack's image (it pins the digest when the stack does), its progress on stderr.
void PullWithProgress(Context& ctx, docker::Engine& engine, const std::string& image) {
  std::string shown;
  docker::EngineError err;
  const bool ok = engine.Pull(
      image,
      [&](const docker::PullProgress& p) {
        const std::string text = p.Text(image);
        if (text != shown && !ctx.opts.quiet) *ctx.err << "gpuprep: accept: " << TerminalSafe(text) << "\n";
        shown = text;
      },
      &err);
  if (!ok) throw Error(kExitFailed, "accept: cannot pull " + image + ": " + TerminalSafe(err.message));
}

// A container for the check across nodes: the host's network (node 0 listens at the master's address; NCCL
// picks the host's interfaces), the RDMA devices, memlock without limit and IPC_LOCK for their registrations.
void NodesContainer(Context& ctx, docker::ContainerRun& run) {
  run.network_host = true;
  if (ctx.local_fs->IsDir("/dev/infiniband")) run.devices.push_back("/dev/infiniband");
  run.memlock_unlimited = true;
  run.cap_add.push_back("IPC_LOCK");
}

// Ctrl-C and SIGTERM while the program runs (the live host's handlers; none in tests without a waiter).
std::function<bool()> Interrupted(Context& ctx, std::unique_ptr<sys::Waiter>& holder) {
  if (ctx.make_waiter) holder = ctx.make_waiter();
  sys::Waiter* w = holder.get();
  return [w] { return w && w->Stopped(); };
}

}  // namespace

Measured MeasureOnHost(Context& ctx, const Target& t, const MeasurePlan& plan) {
  std::unique_ptr<sys::Waiter> waiter;
  const auto interrupted = Interrupted(ctx, waiter);
  const auto env = RunEnv(ctx, t, plan);
  return Measure(ctx, t, plan, "python3", env,
                 [&](const std::vector<std::string>& argv, accept::ProgramStream& stream) {
                   return accept::RunOnHost(*ctx.runner, argv, env, stream, PlanBudget(plan), interrupted);
                 });
}

Measured MeasureInContainer(Context& ctx, const Target& t, const MeasurePlan& plan) {
  if (!ctx.unix_http) throw Error(kExitFailed, "accept: no Docker Engine API client in this build");
  const manifest::Stack& s = t.stack;
  const std::string image = docker::ImagePullReference(s.image.ref, s.image.digest, s.image.mirror);
  if (image.empty())
    throw UsageError("accept: stack " + s.name +
                     " names no image to measure in; --runtime host measures with this "
                     "host's python3 and PyTorch");
  docker::Engine engine(*ctx.unix_http, apply::DockerSocket(&t.facts));
  docker::EngineError err;
  auto details = engine.InspectImage(image, &err);
  if (!details && err.status == 404) {
    PullWithProgress(ctx, engine, image);
    details = engine.InspectImage(image, &err);
  }
  if (!details) throw Error(kExitFailed, "accept: image inspect " + image + ": " + TerminalSafe(err.message));
  if (!details->CarriesPyTorch())
    throw Error(kExitFailed,
                "accept: " + image +
                    " carries no PyTorch (no PYTORCH_VERSION in its config); the measurement program "
                    "needs it. --runtime host measures with this host's python3 and PyTorch");
  const accept::Reaped reaped = accept::ReapStale(engine, sys::ProcessAlive);
  for (const auto& id : reaped.removed)
    if (!ctx.opts.quiet)
      *ctx.err << "gpuprep: accept: removed container " << id.substr(0, 12)
               << " that a stopped gpuprep accept left running\n";
  if (!reaped.busy.empty()) throw Error(kExitFailed, "accept: " + reaped.busy + "; nothing was measured");
  if (!reaped.error.empty()) throw Error(kExitFailed, "accept: " + TerminalSafe(reaped.error));

  docker::ContainerRun base = apply::StackGpuRun(s, image, {});
  base.env = RunEnv(ctx, t, plan);
  if (plan.nodes) NodesContainer(ctx, base);
  const std::string label = accept::RunLabel(sys::OwnPid(), static_cast<long long>(std::time(nullptr)));
  std::unique_ptr<sys::Waiter> waiter;
  const auto interrupted = Interrupted(ctx, waiter);
  return Measure(ctx, t, plan, "python", base.env,
                 [&](const std::vector<std::string>& argv, accept::ProgramStream& stream) {
                   docker::ContainerRun run = base;
                   run.cmd = argv;
                   return accept::RunInContainer(engine, run, label, stream, PlanBudget(plan), interrupted);
                 });
}

}  // namespace gp::cli
