// The host around the GPUs (`gpuprep size`, docs/size.md "The host around the GPUs"): CPU cores and RAM a
// server needs for a configuration, the disk a run needs, and what data-center servers ship. Plain values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "size/estimate.h"
#include "size/host_ratios.h"

namespace gp::size {

// A server as its maker or cloud publishes it (each row names its source).
struct ReferenceServer {
  std::string name;  // "AWS p5.48xlarge"
  int gpus = 0;
  int cpus = 0;  // logical CPUs (vCPUs) for cloud instances, cores for NVIDIA's systems
  bool vcpus = true;
  uint64_t ram = 0;      // bytes, read as the source writes it (GiB, or a DIMM configuration)
  std::string ram_text;  // "2048 GiB", "2 TB"
  std::string storage;   // local storage as published ("" when the source gives none)
  std::string source;
};
const std::vector<ReferenceServer>& ReferenceServers();

struct HostNeed {
  WorkloadKind workload = WorkloadKind::kLlm;
  int gpus = 0;  // per server
  int servers = 1;
  int cpu_cores = 0;  // the sourced minimum per server
  std::string cpu_formula;
  double ram_floor = 0;       // the server's GPU memory (the sourced floor)
  double ram_offload = 0;     // states the server's GPUs keep in host RAM (Estimate::host_per_gpu x GPUs)
  double ram_embeddings = 0;  // a recommender's tables in host RAM, this server's share
  double RamNeed() const { return ram_offload + ram_embeddings; }  // without it the run cannot start
  double RamMin() const { return ram_floor + RamNeed(); }          // floor plus what lives there
  std::string embeddings_formula;
  double checkpoint = 0;  // one checkpoint, the whole job
  std::string checkpoint_formula;
  double base_weights = 0;  // the model's 16-bit weights, read at start
  double dataset = 0;       // as given; 0: not counted
  int kept = 1;
  double Storage() const { return base_weights + kept * checkpoint + dataset; }
  std::vector<std::string> notes;
};

// The workload kind of a task: as set, else LLM for transformer models and vision for vision networks.
WorkloadKind WorkloadOf(const Task& t);

// What a server of `per_server` GPUs of `gpu_memory` bytes each needs for `e` (the per-GPU estimate of the
// configuration), out of `servers` servers.
HostNeed NeedFor(const Task& t, const Estimate& e, int per_server, int servers, double gpu_memory);

}  // namespace gp::size
