// The check across nodes (`gpuprep accept --nnodes`, docs/accept.md "Across nodes"): one all-reduce over
// every GPU of every node, its bus bandwidth against a floor derived from the RDMA ports NCCL used, and
// NCCL's own log (NCCL_DEBUG=INFO, read by nccllog::Reader) for the transport it took and GPUDirect RDMA.
// Pure: a recording in, checks out.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "accept/judge.h"
#include "accept/record.h"

namespace gp::accept {

// A port rate's GPUDirect RDMA write floor, as Azure's node health checks require it of each port of a
// server (check_ib_bw_gdr, ib_write_bw in Gb/s), with the server configuration it comes from.
struct PortFloor {
  double rate_gbps;   // the port's InfiniBand rate
  double floor_gbps;  // the write bandwidth each such port must reach
  const char* source;
};
const std::vector<PortFloor>& PortFloors();

// The floor for the bus bandwidth of an all-reduce across nodes: the sum, over the InfiniBand ports NCCL
// used ("mlx5_0:1/IB" as its log lists them), of each port's floor in GB/s. The step from ports to the
// all-reduce is NVIDIA's own: a ring all-reduce between nodes moves its data through those ports, so its bus
// bandwidth is their sum less a few percent (NCCL's developers: a DGX A100's eight 200 Gb/s cards measure
// 192 GB/s, NVIDIA/nccl#812; a ConnectX-7 at NDR reaches 48-49 GB/s per NIC, NVIDIA/nccl-tests#267; and on
// two nodes only the ring is bounded so, NVIDIA/nccl-tests#196, hence NCCL_ALGO=Ring). nullopt, with `why`,
// when a port is not InfiniBand, not on this node's list, or at a rate with no sourced floor.
std::optional<Value> NodesFloor(const NodesInfo& nodes, const std::vector<std::string>& used_ports,
                                std::string* why);

// The checks of a recording with a nodes record (group "nodes").
std::vector<Check> NodesChecks(const Recording& rec);

}  // namespace gp::accept
