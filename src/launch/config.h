// The run-config model: one plain value that every launch renderer (docker, json, compose, torchrun,
// slurm, k8s) reads. Built and validated by launch/resolve.cc from the stack's defaults, a team profile,
// the flags and the host facts; each field remembers where its value came from (docs/cli.md, "Where values
// come from").
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gp::launch {

// Where a resolved value came from, printed by `launch --format json` as "origins".
enum class Origin { kDefault, kStack, kProfile, kFlag, kHost };
const char* OriginName(Origin o);  // "default", "stack", "profile", "flag", "host"

// Which GPUs the container gets. kAll: every GPU of the host; kCount: the first `count`; kDevices: the
// listed indices (in the order given); kNone: `--gpus none`, no GPU at all.
struct GpuSelection {
  enum class Kind { kAll, kCount, kDevices, kNone };
  Kind kind = Kind::kAll;
  int count = 0;             // kCount: N; kAll: the host's GPU count (0 when unknown)
  std::vector<int> indices;  // kDevices
  int Number() const;        // how many GPUs the container sees (0 when unknown for kAll)
};

// How GPUs reach containers on the target host: the NVIDIA runtime hook (`--gpus`) or CDI (`--device`).
enum class GpuAccess { kRuntime, kCdi };

struct Mount {
  std::string source;  // host path
  std::string target;  // container path
  bool read_only = false;
};

struct Ulimit {
  std::string name;  // "memlock", "stack"
  int64_t soft = 0;  // -1 = unlimited
  int64_t hard = 0;
};

struct MultiNode {
  int nodes = 1;
  int node_rank = 0;
  std::string master_addr;       // "" when not given (slurm derives it from the allocation)
  int master_port = 29500;       // torchrun's default
  bool rank_from_index = false;  // k8s: NODE_RANK is each pod's completion index (not a -e or profile value)
};

struct RunConfig {
  std::string image;  // "" only when bare
  bool bare = false;  // --image none with --format torchrun: no container at all
  GpuSelection gpus;
  GpuAccess access = GpuAccess::kRuntime;
  std::string ipc = "host";           // "host" | "private"
  std::optional<uint64_t> shm_bytes;  // --shm-size; none with ipc host (the host's /dev/shm is used)
  uint64_t host_shm_bytes = 0;        // the host's /dev/shm (what ipc host gives), 0 when unknown
  uint64_t auto_shm_bytes = 0;        // the `--shm auto` size for a private /dev/shm (k8s emptyDir)
  std::vector<Ulimit> ulimits;
  std::vector<Mount> mounts;
  std::vector<std::pair<std::string, std::string>> env;  // in order; names unique
  std::vector<std::string> ports;                        // docker -p syntax "8888:8888"
  std::vector<std::string> devices;  // host devices the container gets: "/dev/infiniband" (RDMA)
  std::vector<std::string> cap_add;  // capabilities added: "IPC_LOCK" (RDMA memory registration)
  std::string workdir;
  std::string network;  // "" = docker's default bridge; "host" for multi-node NCCL
  // k8s, several nodes: the extended resource that gives the pod the node's RDMA devices ("" none)
  std::string rdma_resource;
  int rdma_count = 0;                // how many of it the pod asks for
  std::string name;                  // container / job name ("" = none)
  bool interactive = false;          // -it
  std::vector<std::string> command;  // after `--`; empty = the image's default
  MultiNode multi;
  std::string profile;            // profile name ("" = none)
  std::string stack;              // stack name the defaults came from
  bool dataloader_heavy = false;  // the profile says the workload leans on DataLoader workers

  std::map<std::string, Origin> origins;  // field ("image", "gpus", "shm", ...) -> origin
  std::vector<std::string> warnings;      // printed on stderr (wasteful but working choices)
};

}  // namespace gp::launch
