// NCCL's environment for a job on several nodes, chosen from this node's facts (docs/cli.md, "NCCL's
// environment"). The rules follow NCCL's environment-variable documentation,
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html:
// - NCCL_SOCKET_IFNAME: "=NAME" matches exactly that interface, "^a,b" excludes interfaces starting with a or
// b;
//   without the variable NCCL prefers interfaces starting with "ib", then any but docker and lo.
// - NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1" names devices and ports exactly; a plain "mlx5_1" is a prefix that also
//   selects mlx5_10 to mlx5_19.
// - NCCL_IB_GID_INDEX: from NCCL 2.21 NCCL picks the GID itself (the default -1); only older NCCL needs it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "launch/config.h"
#include "probe/host.h"
#include "util/version.h"

namespace gp::launch {

// What was read of this node's network on the live host (cli/launch.cc fills it through sys/net.h).
struct LocalNet {
  bool measured = false;              // the route toward MASTER_ADDR was asked of this host's kernel
  std::string why_not;                // when the interface is unknown: why (a clause)
  std::string route_ifname;           // the interface the kernel routes MASTER_ADDR through ("" unknown)
  std::vector<std::string> v4_order;  // the interfaces with an IPv4 address, in the kernel's order
};

// Asks this host's kernel (sys/net.h) which interface it routes `master_addr` through (an IPv4 or IPv6
// literal, "[v6]" accepted; a name is not resolved). On the master node itself the kernel routes its own
// address through lo: the interface that holds the address is the one the other nodes reach.
LocalNet ReadLocalNet(const std::string& master_addr);

// The exclusion form used when this node's interface is not known.
inline constexpr const char* kSocketIfnameExclude = "^docker,lo";

// The interface NCCL picks itself without NCCL_SOCKET_IFNAME: the first starting with "ib", else the first
// that starts with neither docker, lo nor virbr, else a docker one, else lo ("" when none).
std::string NcclOwnInterface(const std::vector<std::string>& v4_order);

// "=mlx5_0:1,mlx5_1:1": every ACTIVE InfiniBand port, and every ACTIVE RoCE port with a RoCE v2 IPv4 GID;
// EFA devices are not NCCL's IB transport. "" when there is none.
std::string IbHcaValue(const probe::NetworkInfo& n);

// Adds NCCL_SOCKET_IFNAME, NCCL_IB_HCA and the notes about them to `c` (c.multi.nodes > 1). A value the
// profile or -e already set wins, with a note. `nccl`: the NCCL the job runs (nullopt: not known).
void AddNcclEnv(const probe::HostFacts& host, const LocalNet& local, const std::optional<Version>& nccl,
                RunConfig& c);

}  // namespace gp::launch
