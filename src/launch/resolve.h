// Builds the validated RunConfig from the stack's defaults, a team profile, the flags and the target
// host (lowest to highest precedence: default < stack < profile < flag; the host fills in facts such as
// the GPU count and /dev/shm). Throws FlagError (exit 2) for anything the host cannot satisfy.
//
// `--shm auto` (the default): with --ipc host the container shares the host's IPC namespace and uses
// the host's /dev/shm, so no size is set. With --ipc private the size is
//   min(host memory / 2, shm_per_gpu x GPUs), at least 1 GiB,
// where shm_per_gpu is the profile's (default 8 GiB). Half the memory is what Linux gives a tmpfs by
// default (the host's own /dev/shm), so the container can never pin more RAM in shm than the host
// itself allows; 8 GiB per GPU leaves room for several DataLoader workers each holding a few prefetched
// batches per GPU process; 1 GiB is the floor NVIDIA's older NGC banners recommended (--shm-size=1g).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "launch/config.h"
#include "launch/nccl_env.h"
#include "launch/profile.h"
#include "launch/target.h"
#include "manifest/model.h"

namespace gp::sys {
class Fs;
}

namespace gp::launch {

// The launch flags as given (unset = not on the command line).
struct LaunchRequest {
  std::optional<std::string> image, gpus, shm, ipc, workdir, name, master, rdma_resource;
  std::optional<int> nodes, node_rank;
  std::vector<std::string> volumes;  // -v SRC:DST[:ro]
  std::vector<std::string> envs;     // -e NAME=VALUE
  bool interactive = false;
  std::string format = "docker";     // docker | json | compose | torchrun | slurm | k8s
  std::vector<std::string> command;  // after `--`
};

struct ResolveInputs {
  const Target* target = nullptr;            // required
  const manifest::Stack* stack = nullptr;    // null: no stack (then --image is required)
  const manifest::Compat* compat = nullptr;  // required
  const Profile* profile = nullptr;          // null: no --profile
  const sys::Fs* live_fs = nullptr;          // the live host's files, for mount sources; null with --host
  const LocalNet* local_net = nullptr;       // this host's route toward MASTER_ADDR; null: not read
  // --host given once per node: every node's snapshot in rank order (`target` is one of them); null otherwise
  const std::vector<Target>* nodes = nullptr;
  std::string machine_id;  // this host's /etc/machine-id ("" unknown): a snapshot with it is this host
};

// The Kubernetes RDMA resources asked for by default (docs/cli.md gives their sources).
inline constexpr const char* kRdmaSharedResource = "rdma/rdma_shared_device_a";
inline constexpr const char* kEfaResource = "vpc.amazonaws.com/efa";

constexpr uint64_t kDefaultShmPerGpu = 8ULL << 30;
constexpr uint64_t kMinAutoShm = 1ULL << 30;

// The formats `--format` accepts, in help order.
const std::vector<std::string>& LaunchFormats();

RunConfig Resolve(const LaunchRequest& req, const ResolveInputs& in);

// The `--shm auto` size for ipc private (see the rule above).
uint64_t AutoShmBytes(uint64_t host_memory_bytes, uint64_t per_gpu_bytes, int gpus);

}  // namespace gp::launch
