// Whether a real host fits a task (`gpuprep size --host FILE`, `--root DIR`, `--check-host`): its GPUs'
// memory against the per-GPU need of the best layout for its GPU count, and its CPUs, RAM and disk
// against what the task needs around them (host.h). The CLI turns a probe or a snapshot into a HostSpec.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "size/host.h"
#include "size/recommend.h"

namespace gp::size {

struct HostGpu {
  std::string name;                    // as the host reports it
  std::string device_id;               // "0x2330"
  std::optional<uint64_t> nvml_bytes;  // NVML's total, when the snapshot or the live driver gave one
  std::optional<Board> board;          // the catalogue's board, when the catalogue knows the GPU
};

struct HostSpec {
  std::string label;                  // hostname or the snapshot's path
  int cpus = 0;                       // logical CPUs
  uint64_t memory = 0;                // RAM bytes
  std::optional<uint64_t> disk_free;  // free bytes under /var
  int nvswitches = 0;
  std::vector<HostGpu> gpus;
};

struct HostItem {
  std::string what;        // "GPU memory", "CPU", "RAM", "disk"
  std::string status;      // ok | short (does not fit) | below (under the sourced floor; fits) | unknown
  std::string have, need;  // human-readable
  std::string detail;      // the formula or the reason
};

struct HostVerdict {
  std::string label;
  bool fits = false;
  std::string summary;           // "8x H100 SXM5 80GB, 192 CPUs, 2.2 TB RAM, 8.0 TB free"
  double gpu_memory = 0;         // bytes per GPU it was judged with (0: unknown)
  std::string gpu_memory_from;   // "NVML" | "the catalogue (nvidia-smi total of the board)" | ...
  std::optional<Option> option;  // the layout judged (the one that fits, else the closest)
  double shortfall = 0;          // per GPU, when the GPUs are short
  std::vector<HostItem> items;
  std::vector<std::string> notes;
};

// GPU memory short, or RAM below what offloaded states and embedding tables need, or disk (when known)
// below the run's storage: does not fit. CPUs or RAM under the sourced floor alone: fits, marked below.
// GPU memory unknown (no sourced size, or a lower-bound estimate that fits): not a fit, verdict unknown.
HostVerdict JudgeHost(const Task& t, const HostSpec& h);

// "fits", "does not fit", or "unknown" (nothing short, but the GPU memory could not be judged).
std::string VerdictWord(const HostVerdict& v);

}  // namespace gp::size
