// Resolution order and every validation rule of `gpuprep launch` (docs/cli.md). Each rule throws one
// FlagError naming the flag the user would change; the texts are tested word for word.
#include "launch/resolve.h"

#include <algorithm>
#include <cctype>

#include "launch/driver_check.h"
#include "launch/nodes.h"
#include "launch/validate.h"
#include "sys/fs.h"
#include "util/error.h"
#include "util/image_ref.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::launch {
namespace {

std::string IndexList(const std::vector<probe::Gpu>& gpus) {
  std::vector<std::string> ids;
  ids.reserve(gpus.size());
  for (const auto& g : gpus) ids.push_back(std::to_string(g.index));
  return Join(ids, ", ");
}

// The flag a user changes for a value of this origin: the flag itself, the profile, or the stack.
std::string FlagFor(Origin o, const std::string& flag) {
  return o == Origin::kProfile ? "--profile" : o == Origin::kStack ? "--manifest" : flag;
}

void ResolveGpus(const LaunchRequest& req, const Target& t, RunConfig& c) {
  c.origins["gpus"] = Origin::kStack;  // NGC's recommended --gpus all
  if (req.gpus) {
    c.gpus = ParseGpus(*req.gpus);
    c.origins["gpus"] = Origin::kFlag;
  }
  const auto& gpus = t.host.gpus;
  const int have = static_cast<int>(gpus.size());
  const std::string where = t.from_snapshot ? "the host in " + t.snapshot_path : "this host";
  switch (c.gpus.kind) {
    case GpuSelection::Kind::kNone:
      return;
    case GpuSelection::Kind::kAll:
      if (have == 0) throw FlagError("--gpus", where + " has no NVIDIA GPU");
      c.gpus.count = have;
      return;
    case GpuSelection::Kind::kCount:
      if (c.gpus.count > have)
        throw FlagError("--gpus", std::to_string(c.gpus.count) + " GPUs requested, but " + where + " has " +
                                      std::to_string(have));
      return;
    case GpuSelection::Kind::kDevices:
      for (int idx : c.gpus.indices) {
        const bool exists =
            std::any_of(gpus.begin(), gpus.end(), [idx](const probe::Gpu& g) { return g.index == idx; });
        if (!exists) {
          std::string has =
              have == 0 ? "it has none" : "it has " + std::to_string(have) + ": " + IndexList(gpus);
          throw FlagError("--gpus",
                          "GPU " + std::to_string(idx) + " does not exist on " + where + " (" + has + ")");
        }
      }
      if (req.format == "slurm" || req.format == "k8s")
        throw FlagError("--gpus", "the " + req.format +
                                      " format can only count GPUs (the scheduler picks them); use --gpus " +
                                      std::to_string(c.gpus.indices.size()) +
                                      " instead of a list of indices");
      return;
  }
}

void ResolveShmIpc(const LaunchRequest& req, const Profile* p, const Target& t, RunConfig& c) {
  c.host_shm_bytes = t.host.shm_bytes;
  c.ipc = "host";
  c.origins["ipc"] = Origin::kStack;  // NGC's recommended --ipc=host
  std::string shm = "auto";
  Origin shm_origin = Origin::kDefault;
  if (p && !p->ipc.empty()) c.ipc = p->ipc, c.origins["ipc"] = Origin::kProfile;
  if (p && !p->shm.empty()) shm = p->shm, shm_origin = Origin::kProfile;
  if (req.shm) shm = *req.shm, shm_origin = Origin::kFlag;
  if (req.ipc) {
    if (*req.ipc != "host" && *req.ipc != "private")
      throw FlagError("--ipc", "expected host or private, got \"" + *req.ipc + "\"");
    c.ipc = *req.ipc;
    c.origins["ipc"] = Origin::kFlag;
  }
  std::optional<uint64_t> size;
  if (shm != "auto") size = ParseShm(shm);
  if (size && c.ipc == "host") {
    if (req.ipc && shm_origin == Origin::kFlag)
      throw FlagError("--shm",
                      "a size has no effect with --ipc host (the container uses the host's /dev/shm); "
                      "use --ipc private or --shm auto");
    if (c.origins["ipc"] != Origin::kFlag) {
      c.ipc = "private";  // a shm size (flag or profile) asks for a private IPC namespace
      c.origins["ipc"] = shm_origin;
    } else {
      size.reset();  // --ipc host on the command line wins over the profile's size
      shm_origin = Origin::kFlag;
    }
  }
  c.origins["shm"] = shm_origin;
  const uint64_t mem = t.host.memory_bytes;
  c.auto_shm_bytes =
      AutoShmBytes(mem, p && p->shm_per_gpu ? *p->shm_per_gpu : kDefaultShmPerGpu, c.gpus.Number());
  if (c.ipc == "host") return;
  if (size) {
    if (mem && *size > mem)
      throw FlagError(shm_origin == Origin::kFlag ? "--shm" : "--profile",
                      HumanBytes(*size) + " of shm is more than the memory of " +
                          (t.from_snapshot ? "the host in " + t.snapshot_path : "this host") + " (" +
                          HumanBytes(mem) + ")");
    c.shm_bytes = size;
  } else {
    c.shm_bytes = c.auto_shm_bytes;
    c.origins["shm"] = Origin::kHost;
  }
  // Below 2 GiB per GPU a DataLoader-heavy workload (several workers per GPU, each holding prefetched
  // batches in shm) stalls or dies with "bus error"; it still runs, so this is a warning.
  if (c.dataloader_heavy && *c.shm_bytes < (2ULL << 30) * static_cast<uint64_t>(std::max(1, c.gpus.Number())))
    c.warnings.push_back("--ipc private with " + HumanBytes(*c.shm_bytes) + " of shm for " +
                         std::to_string(c.gpus.Number()) +
                         " GPU(s) will starve the DataLoader workers of profile " + c.profile +
                         "; use --ipc host or --shm auto");
}

void ResolveMulti(const LaunchRequest& req, RunConfig& c) {
  if (req.nodes && *req.nodes < 1) throw FlagError("--nodes", "must be at least 1");
  c.multi.nodes = req.nodes.value_or(1);
  if (req.node_rank) {
    if (!req.nodes) throw FlagError("--node-rank", "needs --nodes");
    if (*req.node_rank < 0 || *req.node_rank >= c.multi.nodes)
      throw FlagError("--node-rank", std::to_string(*req.node_rank) + " is not below --nodes " +
                                         std::to_string(c.multi.nodes) + " (ranks are 0.." +
                                         std::to_string(c.multi.nodes - 1) + ")");
    c.multi.node_rank = *req.node_rank;
  }
  if (req.master) {
    if (c.multi.nodes < 2) throw FlagError("--master", "only meaningful with --nodes 2 or more");
    std::tie(c.multi.master_addr, c.multi.master_port) = ParseMaster(*req.master);
  }
  if (req.node_rank && c.multi.nodes > 1 && req.format == "k8s")
    throw FlagError("--node-rank",
                    "the k8s format gives each pod its rank (the Job's completion index); drop --node-rank");
  if (req.rdma_resource && req.format != "k8s") throw FlagError("--rdma-resource", "only for --format k8s");
  if (req.rdma_resource && c.multi.nodes < 2)
    throw FlagError("--rdma-resource", "only meaningful with --nodes 2 or more");
  if (c.multi.nodes > 1 && c.multi.master_addr.empty() && req.format != "slurm")
    throw FlagError("--nodes",
                    std::to_string(c.multi.nodes) + " nodes need --master ADDR:PORT (the rank-0 node)");
  if (c.multi.nodes > 1 && !req.node_rank && req.format != "slurm" && req.format != "k8s")
    throw FlagError("--nodes", "each node runs its own command: give --node-rank (0.." +
                                   std::to_string(c.multi.nodes - 1) + ")");
}

void ResolveMounts(const LaunchRequest& req, const Profile* p, const ResolveInputs& in, RunConfig& c) {
  auto add = [&c](const Mount& m) {
    auto same =
        std::find_if(c.mounts.begin(), c.mounts.end(), [&m](const Mount& x) { return x.target == m.target; });
    if (same != c.mounts.end())
      *same = m;  // a flag replaces the profile's mount at the same target
    else
      c.mounts.push_back(m);
  };
  if (p)
    for (const Mount& m : p->mounts) add(m), c.origins["mounts"] = Origin::kProfile;
  std::vector<Mount> from_flags;
  for (const std::string& v : req.volumes) {
    from_flags.push_back(ParseMount(v));
    add(from_flags.back());
    c.origins["mounts"] = Origin::kFlag;
  }
  if (!in.live_fs) return;  // a snapshot's files are not here to check
  for (const Mount& m : c.mounts) {
    if (in.live_fs->Exists(m.source)) continue;
    const bool flag = std::any_of(from_flags.begin(), from_flags.end(), [&m](const Mount& x) {
      return x.source == m.source && x.target == m.target;
    });
    throw FlagError(flag ? "-v" : "--profile",
                    m.source + " does not exist on this host (mounted at " + m.target + ")");
  }
}

void ResolveEnv(const LaunchRequest& req, const Profile* p, RunConfig& c) {
  auto set = [&c](const std::string& k, const std::string& v) {
    auto it = std::find_if(c.env.begin(), c.env.end(), [&k](const auto& e) { return e.first == k; });
    if (it != c.env.end())
      it->second = v;
    else
      c.env.emplace_back(k, v);
  };
  if (p)
    for (const auto& [k, v] : p->env) set(k, v), c.origins["env." + k] = Origin::kProfile;
  for (const std::string& e : req.envs) {
    auto [k, v] = ParseEnv(e);
    set(k, v);
    c.origins["env." + k] = Origin::kFlag;
  }
}

void CheckDriverAndAccess(const LaunchRequest& req, const ResolveInputs& in, RunConfig& c) {
  const Target& t = *in.target;
  if (c.gpus.kind == GpuSelection::Kind::kNone) return;
  const std::string& f = req.format;
  if (c.bare) return;  // no container runtime involved; the host's own driver runs the job
  if (f == "docker" || f == "json" || f == "compose" || f == "torchrun") {
    if (HasNvidiaRuntime(t))
      c.access = GpuAccess::kRuntime;
    else if (HasCdi(t))
      c.access = GpuAccess::kCdi;
    else
      throw FlagError("--gpus",
                      (t.from_snapshot ? "the host in " + t.snapshot_path : "this host") +
                          " has no NVIDIA container runtime and no CDI spec, so containers cannot see its "
                          "GPUs (fix there: " +
                          verdict::ApplyFix("container_toolkit") +
                          "; gpuprep doctor there gives the full install)");
    c.origins["access"] = Origin::kHost;
  }
  bool all_dc = !t.host.gpus.empty();
  for (const auto& g : t.host.gpus) {
    const manifest::GpuModel* m =
        in.compat->GpuByPci(g.device_id, g.subsystem_vendor_id, g.subsystem_device_id);
    all_dc = all_dc && m && m->datacenter;
  }
  ImageCuda image = ImageCudaFor(c.image, in.stack, *in.compat);
  // The image itself, when the local engine has it or its registry was read (--registry): its config's
  // CUDA_VERSION outranks every table.
  const probe::ImageInfo& local = t.host.docker.image;
  if ((local.present || local.from_registry) && local.ref == c.image && !local.cuda.empty())
    if (auto cuda = Version::Parse(local.cuda)) image.cuda = *cuda;
  DriverVerdict v = CheckDriver(image, HostDriverVersion(t), all_dc, *in.compat);
  if (v.kind == DriverVerdict::Kind::kTooOld) throw FlagError("--image", v.message);
  if (!v.message.empty()) c.warnings.push_back(v.message);
}

// The NCCL the job runs: the image's (NVIDIA's table of NGC images), else the stack's pin.
std::optional<Version> JobNccl(const RunConfig& c, const ResolveInputs& in) {
  if (const manifest::ImageFacts* f = in.compat->ImageByRef(c.image); f && f->nccl.known())
    return f->nccl.version;
  if (in.stack && in.stack->nccl.version.known()) return in.stack->nccl.version.version;
  return std::nullopt;
}

// A job on several nodes: NCCL's environment from this node's facts, and in a container the RDMA devices
// and the capability to pin memory for them (memlock is unlimited already: the stack's ulimits).
// EFA devices too are reached through /dev/infiniband and need pinned memory ("Cannot access EFA devices from
// docker container", https://github.com/aws/aws-ofi-nccl/issues/879).
void ResolveNodeNetwork(const LaunchRequest& req, const ResolveInputs& in, RunConfig& c) {
  if (c.bare) return;  // the bare torchrun line carries no environment
  // A Slurm script or a Kubernetes Job is one text for every node.
  JobNodes j;
  j.shared = req.format == "slurm" || req.format == "k8s";
  j.nodes = c.multi.nodes;
  const auto here = [&in](const Target& t) {
    return !t.from_snapshot || (!in.machine_id.empty() && t.host.machine_id == in.machine_id);
  };
  j.target = {in.target->Describe(), &in.target->host, here(*in.target)};
  if (in.nodes)
    for (const Target& t : *in.nodes)
      if (&t != in.target) j.others.push_back({t.Describe(), &t.host, here(t)});
  if (in.local_net && j.HereIsANode()) {
    j.local = *in.local_net;
  } else {
    j.local.why_not =
        !j.shared ? (in.target->from_snapshot ? "the host comes from a snapshot, whose routes are not known"
                                              : "the route was not read")
        : !in.nodes
            ? "every node gets the same " + std::string(req.format == "slurm" ? "script" : "Job")
            : "launch runs on none of the nodes (no snapshot has this host's machine-id), so no route "
              "was read";
  }
  AddNcclEnv(j, JobNccl(c, in), c);
  if (j.shared && !j.AllKnown())
    c.warnings.push_back(
        std::string(req.format == "slurm" ? "the Slurm script" : "the Kubernetes Job") +
        " gives every node the NCCL_NET and NCCL_IB_HCA of " + in.target->Describe() +
        ": the nodes must have the same RDMA devices (give every node's snapshot, --host once per node, to "
        "check them)");
  if (NcclNetValue(in.target->host.network).value == "Socket") return;
  c.devices.push_back("/dev/infiniband");
  c.cap_add.push_back("IPC_LOCK");
  c.origins["devices"] = Origin::kHost;
  c.origins["cap_add"] = Origin::kHost;
}

// k8s, several nodes: the extended resource through which the pod gets the node's RDMA devices. Defaults per
// device plugin: rdma/rdma_shared_device_a, the shared pool NVIDIA's network operator configures in
// Mellanox's k8s-rdma-shared-dev-plugin (prefix "rdma", the plugin's README; the operator's example pods ask
// for 1), and vpc.amazonaws.com/efa from AWS's EFA device plugin (aws-efa-k8s-device-plugin), one per EFA
// device.
void ResolveRdmaResource(const LaunchRequest& req, const probe::NetworkInfo& n, RunConfig& c) {
  const std::string net = NcclNetValue(n).value;
  const int efa = static_cast<int>(
      std::count_if(n.rdma.begin(), n.rdma.end(), [](const probe::RdmaDevice& d) { return d.efa; }));
  std::string name = net == kOfiNetName ? kEfaResource : net == "IB" ? kRdmaSharedResource : "";
  c.origins["rdma_resource"] = Origin::kHost;
  if (req.rdma_resource) {
    if (*req.rdma_resource != "none" && !ValidExtendedResourceName(*req.rdma_resource))
      throw FlagError("--rdma-resource",
                      "\"" + *req.rdma_resource +
                          "\" is not a Kubernetes extended-resource name (DOMAIN/NAME, e.g. "
                          "rdma/rdma_shared_device_a), or none");
    name = *req.rdma_resource == "none" ? "" : *req.rdma_resource;
    c.origins["rdma_resource"] = Origin::kFlag;
  }
  if (name.empty()) return;
  c.rdma_resource = name;
  c.rdma_count = name == kEfaResource && efa > 0 ? efa : 1;
}

}  // namespace

const std::vector<std::string>& LaunchFormats() {
  static const std::vector<std::string> kFormats = {"docker", "json", "compose", "torchrun", "slurm", "k8s"};
  return kFormats;
}

uint64_t AutoShmBytes(uint64_t host_memory_bytes, uint64_t per_gpu_bytes, int gpus) {
  uint64_t want = per_gpu_bytes * static_cast<uint64_t>(std::max(1, gpus));
  if (host_memory_bytes) want = std::min(want, host_memory_bytes / 2);
  want = std::max(want, kMinAutoShm);
  return want;
}

namespace {

// --format names one of LaunchFormats.
void CheckLaunchFormat(const LaunchRequest& req) {
  const auto& formats = LaunchFormats();
  if (std::find(formats.begin(), formats.end(), req.format) == formats.end()) {
    std::string msg = "unknown format \"" + req.format + "\"";
    if (auto g = DidYouMean(req.format, formats))
      msg += " (did you mean \"" + *g + "\"?)";
    else
      msg += " (formats: " + Join(formats, ", ") + ")";
    throw FlagError("--format", msg);
  }
}

// The image: the flag's, else the profile's, else the stack's; --image none (torchrun only) runs bare.
void ResolveImage(const LaunchRequest& req, const ResolveInputs& in, const Profile* p, RunConfig& c) {
  if (in.stack && !in.stack->image.ref.empty())  // pinned by the stack's digest, on its mirror
    c.image = StackImageRef(*in.stack), c.origins["image"] = Origin::kStack;
  if (p && !p->image.empty()) c.image = p->image, c.origins["image"] = Origin::kProfile;
  if (req.image) c.image = *req.image, c.origins["image"] = Origin::kFlag;
  if (req.image && *req.image == "none") {  // bare metal: only the torchrun line, no container
    if (req.format != "torchrun")
      throw FlagError("--image",
                      "none (no container) is only for --format torchrun, which then prints the bare "
                      "torchrun line");
    c.image.clear();
    c.bare = true;
  }
  if (c.image.empty() && !c.bare)
    throw FlagError("--image", "no image: give --image REF, or a --manifest or --profile that names one");
  if (!c.bare && !ParseImageRef(c.image))  // "-x" would be read by docker as an option
    throw FlagError(FlagFor(c.origins["image"], "--image"), "\"" + c.image + "\" is not an image reference");
}

// The working directory (the flag's, else the profile's) and the container's name.
void ResolveWorkdirAndName(const LaunchRequest& req, const Profile* p, RunConfig& c) {
  if (p && !p->workdir.empty()) c.workdir = p->workdir, c.origins["workdir"] = Origin::kProfile;
  if (req.workdir) c.workdir = *req.workdir, c.origins["workdir"] = Origin::kFlag;
  if (!c.workdir.empty() && !ValidContainerWorkdir(c.workdir))
    throw FlagError(FlagFor(c.origins["workdir"], "--workdir"),
                    "must be an absolute path inside the container, got \"" + c.workdir + "\"");
  if (req.name) {
    if (!ValidContainerName(*req.name))
      throw FlagError("--name", "\"" + *req.name +
                                    "\" is not a valid name (letters, digits, _ . -, starting with a "
                                    "letter or digit)");
    c.name = *req.name;
    c.origins["name"] = Origin::kFlag;
  }
}

// A job on several nodes outside Slurm: host networking, the rendezvous variables, NCCL's environment and
// (k8s) the RDMA resource.
void ResolveMultiNode(const LaunchRequest& req, const ResolveInputs& in, RunConfig& c) {
  // Every node's container reaches the others directly (NCCL, rendezvous): host networking, and the
  // rendezvous facts as the variables torch.distributed's env:// init reads.
  c.network = "host";
  c.origins["network"] = Origin::kFlag;
  const std::pair<std::string, std::string> vars[] = {{"MASTER_ADDR", c.multi.master_addr},
                                                      {"MASTER_PORT", std::to_string(c.multi.master_port)},
                                                      {"NNODES", std::to_string(c.multi.nodes)},
                                                      {"NODE_RANK", std::to_string(c.multi.node_rank)}};
  for (const auto& [k, v] : vars) {
    if (std::none_of(c.env.begin(), c.env.end(), [&k = k](const auto& e) { return e.first == k; })) {
      c.env.emplace_back(k, v);
      c.origins["env." + k] = Origin::kFlag;
      if (k == "NODE_RANK" && req.format == "k8s") c.multi.rank_from_index = true;
    }
  }
  ResolveNodeNetwork(req, in, c);
  if (req.format == "k8s") ResolveRdmaResource(req, in.target->host.network, c);
}

}  // namespace

RunConfig Resolve(const LaunchRequest& req, const ResolveInputs& in) {
  const Profile* p = in.profile;
  CheckLaunchFormat(req);
  RunConfig c;
  if (in.stack) c.stack = in.stack->name;
  if (p) c.profile = p->name, c.dataloader_heavy = p->dataloader_heavy;
  ResolveImage(req, in, p, c);

  if (req.interactive && (req.format == "slurm" || req.format == "k8s"))
    throw FlagError("--interactive", "a " + req.format + " job has no terminal; drop --interactive");
  c.interactive = req.interactive;
  if (req.interactive) c.origins["interactive"] = Origin::kFlag;

  ResolveGpus(req, *in.target, c);
  if (c.gpus.kind == GpuSelection::Kind::kNone && req.format == "torchrun")
    throw FlagError("--gpus", "none leaves torchrun no process to start (--nproc_per_node would be 0)");
  ResolveMulti(req, c);
  if (c.multi.nodes > 1 && c.gpus.kind == GpuSelection::Kind::kNone)
    throw FlagError("--gpus",
                    "none contradicts --nodes " + std::to_string(c.multi.nodes) + " (a multi-node GPU job)");
  ResolveShmIpc(req, p, *in.target, c);
  if (req.format == "slurm" && (req.shm || req.ipc))
    c.warnings.push_back(
        std::string(req.shm ? "--shm" : "--ipc") +
        " has no effect in the slurm format: enroot containers share the node's IPC namespace and "
        "/dev/shm");

  c.ulimits = {
      {"memlock", -1, -1},
      {"stack", 67108864, 67108864}};  // NGC images' banner: --ulimit memlock=-1 --ulimit stack=67108864
  c.origins["ulimits"] = Origin::kStack;

  ResolveMounts(req, p, in, c);
  ResolveEnv(req, p, c);
  if (p) c.ports = p->ports;
  if (p && !p->ports.empty()) c.origins["ports"] = Origin::kProfile;

  ResolveWorkdirAndName(req, p, c);
  c.command = req.command;
  if (!c.command.empty()) c.origins["command"] = Origin::kFlag;
  if (c.multi.nodes > 1 && req.format != "slurm") ResolveMultiNode(req, in, c);
  if (c.multi.nodes > 1 && req.format == "slurm") ResolveNodeNetwork(req, in, c);

  CheckDriverAndAccess(req, in, c);
  return c;
}

}  // namespace gp::launch
