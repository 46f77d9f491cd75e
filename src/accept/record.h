// The measurement recording `gpuprep accept` judges: JSON Lines, one record per line (docs/json.md,
// "Acceptance measurements"). Read as hostile input: every line at most kMaxLine bytes, the whole at most
// kMaxTotal, every field type-checked, unknown records and keys refused, NaN, infinities and negative
// values refused; every error names PATH:LINE:COL and is exit 2. Pure: no I/O.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::accept {

inline constexpr size_t kMaxLine = 64u << 10;   // bytes per line, newline excluded
inline constexpr size_t kMaxTotal = 16u << 20;  // bytes per recording
inline constexpr size_t kMaxRecords = 100000;   // lines per recording

// The `run` record: the server as the measuring program saw it, once, first.
struct RunInfo {
  int schema = 0;
  std::string started_at, finished_at;  // RFC 3339 UTC, as recorded
  std::string host;                     // the host name
  std::string driver_version;           // NVML's
  std::string stack;                    // the stack gpuprep applied ("" when none)
  std::string topology;                 // nvswitch | nvlink-bridge | pcie
  int64_t cpus = 0;                     // logical CPUs
  uint64_t ram_bytes = 0;               // MemTotal
  std::vector<uint64_t> nvme_bytes;     // each local NVMe namespace's size (sysfs)
  std::string source;                   // where the numbers come from (a published run or "measured here")
};

// A `gpu` record: one GPU's identity and links, from NVML.
struct GpuInfo {
  int index = 0;
  std::string uuid, serial, name;
  std::string pci_device_id;  // "0x2330"
  uint64_t memory_total_mib = 0;
  int pcie_max_gen = 0, pcie_max_width = 0;          // the board's maximum
  int upstream_max_gen = 0, upstream_max_width = 0;  // the port above it (0: not read)
  std::optional<int> nvlink_links_up;                // links in the up state (absent: not read)
  std::optional<bool> fabric_complete;               // NVML fabric state completed (absent: no fabric)
  std::vector<int> nvlink_p2p_peers;                 // GPUs this one reaches by NVLink peer-to-peer
};

// A `phase` record: one measurement of one phase on one GPU, one pair, or all GPUs.
struct Phase {
  int line = 0;       // where it stands in the recording
  std::string phase;  // matmul_bf16 | hbm_copy | h2d | d2h | p2p | all_reduce | all_reduce_nodes
  int gpu = -1;       // -1: every GPU (all_reduce, all_reduce_nodes)
  int peer = -1;      // p2p: the other GPU; all_reduce and all_reduce_nodes: how many GPUs took part
  int nodes = 0;      // all_reduce_nodes: how many nodes took part
  double value = 0;   // in the phase's unit: TFLOP/s, TB/s or GB/s
  std::string unit;   // the key it came from: tflops, tb_per_s, gb_per_s, busbw_gb_per_s
  double duration_s = 0;
  uint64_t bytes = 0;           // bytes moved per iteration (copies) or the message size (all_reduce)
  int64_t m = 0, n = 0, k = 0;  // matmul shape
  std::optional<int> pcie_gen_current, pcie_width_current;  // read while the phase ran (matmul)
};

// A `phase` record of the burn: one GPU's seeded products, compared by their digest (the integer sum of a
// product's raw 16-bit words, signed), and the small product it checked against the CPU's first.
struct Burn {
  int line = 0;
  int gpu = 0;
  std::optional<int> sm_count;  // the GPU's multi_processor_count (absent: the program's CPU mode)
  int64_t size = 0;             // the products' side (size x size x size)
  int64_t check_values = 0, check_wrong = 0;  // the CPU-checked product: its values, and those that differ
  uint64_t iterations = 0;                    // products made
  int64_t digest = 0;                         // the first product's
  uint64_t mismatches = 0;                    // products whose digest differs from the first's
  std::optional<uint64_t> first_mismatch_iteration;  // 0 is the first product
  std::optional<int64_t> first_mismatch_digest;
  double duration_s = 0;
};

// An Xid NVML reported for a GPU while the burn ran.
struct BurnXid {
  int64_t code = 0;
  double at_s = 0;  // seconds into the burn
};

// A `burn_clocks` record: what gpuprep's own NVML sampler read of one GPU while the burn ran.
struct BurnClocks {
  int line = 0;
  int gpu = 0;
  uint64_t samples = 0;  // readings taken
  std::optional<int64_t> sm_clock_median_mhz, sm_clock_min_mhz;
  std::optional<double> power_median_w, power_max_w;
  std::optional<double> temperature_median_c, temperature_max_c;  // the GPU die, degrees C
  // Each clock-event reason NVML gave (gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost,
  // sw_thermal, hw_thermal, hw_power_brake) with the share of the burn's readings it held (0 to 1).
  std::vector<std::pair<std::string, double>> reasons;
  std::vector<BurnXid> xids;
};

// One port of an RDMA device on the measuring node, as gpuprep read it from sysfs when it measured.
struct NodePort {
  std::string device;      // "mlx5_0"
  int port = 0;            // 1
  std::string link_layer;  // "InfiniBand", "Ethernet" (RoCE), "Unspecified" (EFA)
  double rate_gbps = 0;    // the port's rate, Gb/s (0: not read)
  std::string state;       // "ACTIVE", "DOWN", ...
};

// The `nodes` record: a run of the check across nodes (`accept --nnodes`), as the node that recorded it saw
// it: which node it was, where the nodes met, the NCCL environment gpuprep chose, and this node's RDMA ports.
struct NodesInfo {
  int line = 0;
  int nnodes = 0, node_rank = 0;
  std::string master;                                    // "HOST:PORT"
  std::vector<std::pair<std::string, std::string>> env;  // NCCL_* variables the program ran with
  std::vector<NodePort> ports;
};

struct Recording {
  RunInfo run;
  std::vector<GpuInfo> gpus;
  std::vector<Phase> phases;
  std::vector<Burn> burns;
  std::vector<BurnClocks> burn_clocks;
  std::optional<NodesInfo> nodes;     // a check across nodes
  std::vector<std::string> nccl_log;  // NCCL's own log lines (NCCL_DEBUG=INFO) of that check, in order
};

// Parses `text` (named `path` in errors). Throws FileError (exit 2) at the first bad line; a recording
// without its `run` record first or its `end` record last (a truncated recording) is refused too.
Recording ParseRecording(std::string_view text, const std::string& path);

}  // namespace gp::accept
