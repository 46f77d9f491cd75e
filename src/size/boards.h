// A GPU board as `gpuprep size` sees it: plain values the CLI fills from the GPU catalogue
// (manifests/compat.yaml, whose board fields come from tools/data/gpu-boards.tsv with a source per row).
// Nothing here reads files.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gp::size {

struct Board {
  std::string name;                  // the board model ("H100 SXM5 80GB")
  std::vector<std::string> entries;  // catalogue entry names it covers ("H100 80GB HBM3")
  std::vector<std::string> pci_ids;  // "0x2330"
  bool datacenter = true;            // false: a consumer card
  uint64_t memory_mib = 0;           // usable memory, MiB as nvidia-smi reports it; 0 = no sourced size
  std::string memory_kind;  // nvidia-smi | rounded | marketed | system (see tools/data/gpu-boards.tsv)
  std::string memory_source;
  std::string form;               // sxm | pcie | superchip | desktop | unknown
  std::vector<int> server_sizes;  // GPUs per server on offer, ascending
  int nvlink = 0;                 // GPUs one NVLink/NVSwitch domain joins (0: none assumed)
  std::string p2p;                // yes | no | unknown
  std::string link_source;

  uint64_t MemoryBytes() const { return memory_mib << 20; }
  // The memory is not a total nvidia-smi printed for this board (rounded, marketed or the system's).
  bool Approximate() const { return memory_kind != "nvidia-smi"; }
  // Memory shared with a CPU: a Grace superchip (its CPU memory is reachable but not counted) or a board
  // whose NVML reports none (memory_kind "system").
  bool Unified() const { return form == "superchip" || memory_kind == "system"; }
  int LargestServer() const { return server_sizes.empty() ? 1 : server_sizes.back(); }
  // The GPUs of a server of `per_server` GPUs that share one NVLink domain: the server's own (at most its
  // GPUs), or a domain wider than any server (GB200 NVL72), which then spans servers.
  int DomainIn(int per_server) const {
    if (nvlink <= 0) return 1;
    return nvlink > LargestServer() ? nvlink : (nvlink < per_server ? nvlink : per_server);
  }
  // Servers of this board can be joined over a network (desktops are not offered that way).
  bool MultiServer() const { return form != "desktop"; }
};

}  // namespace gp::size
