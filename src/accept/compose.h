// A recording (docs/json.md, "accept measurements") made of what gpuprep knows of the host and its GPUs
// (the run and gpu records, from its own probe) and the phase records the measurement program printed,
// closed by the end record: the same text --measurements reads, judged the same way and saved with --save.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accept/record.h"

namespace gp::accept {

struct HostRun {
  std::string started_at, finished_at;                // RFC 3339 UTC
  std::string host, driver_version, stack, topology;  // topology: nvswitch, nvlink-bridge or pcie
  int cpus = 0;
  uint64_t ram_bytes = 0;
  std::vector<uint64_t> nvme_bytes;
};

struct HostGpu {
  int index = 0;
  std::string uuid, serial, name, pci_device_id;
  uint64_t memory_total_mib = 0;
  int pcie_max_gen = 0, pcie_max_width = 0;
  int upstream_max_gen = 0;  // 0: not known
  std::optional<int> nvlink_links_up;
  std::optional<bool> fabric_complete;
};

// The PCIe generation of a link speed in GT/s (2.5 -> 1 ... 64 -> 6); 0 when it is none of them.
int PcieGen(double gt_per_s);

// The lines of a check across nodes that gpuprep writes itself: the nodes record, then one nccl_log
// record per line of NCCL's log.
std::vector<std::string> NodesLines(const NodesInfo& nodes, const std::vector<std::string>& nccl_log);

std::string ComposeRecording(const HostRun& run, const std::vector<HostGpu>& gpus,
                             const std::vector<std::string>& phase_lines);

}  // namespace gp::accept
