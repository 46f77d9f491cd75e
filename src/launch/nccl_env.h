// NCCL's environment for a job on several nodes, chosen from this node's facts (docs/cli.md, "NCCL's
// environment"). The rules follow NCCL's environment-variable documentation,
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html:
// - NCCL_SOCKET_IFNAME: "=NAME" matches exactly that interface, "^a,b" excludes interfaces starting with a or
// b;
//   without the variable NCCL prefers interfaces starting with "ib", then any but docker and lo.
// - NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1" names devices and ports exactly; a plain "mlx5_1" is a prefix that also
//   selects mlx5_10 to mlx5_19.
// - NCCL_IB_GID_INDEX: from NCCL 2.21 NCCL picks the GID itself (the default -1); only older NCCL needs it.
// - NCCL_NET: the network NCCL must use, by its name ("IB", "Socket", a plugin's); with it set, NCCL does not
//   fall back to another network, so a plugin that fails to load stops the job.
// EFA hosts: aws-ofi-nccl's plugin names itself "AWS Libfabric" up to 1.12 and "Libfabric" from 1.13, and
// from 1.13 it still answers to NCCL_NET="AWS Libfabric" (src/nccl_ofi_interface_nvidia.cpp,
// nvidia_plugin_name_fixup, added in aws/aws-ofi-nccl@7c014f0d). Its EFA cheatsheet (doc/efa-env-var.md at
// aws/aws-ofi-nccl@2daf7d303aa139a03140aa530957d10521e4478d) lists the libfabric variables per plugin
// version: none from 1.7.0 with libfabric 1.18.0; FI_EFA_USE_DEVICE_RDMA=1 on p4/p5 for 1.6.x; and also
// FI_PROVIDER=efa and NCCL_PROTO=simple for 1.5.0 and older.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "launch/config.h"
#include "probe/host.h"
#include "util/version.h"

namespace gp::launch {

struct JobNodes;  // launch/nodes.h

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

// The network NCCL_NET pins, and why: "AWS Libfabric" (the aws-ofi-nccl plugin) with an ACTIVE EFA port,
// else "IB" with a port IbHcaValue names, else "Socket".
struct NetChoice {
  std::string value;
  std::string why;  // a clause: "this node's RDMA ports are ACTIVE"
};
NetChoice NcclNetValue(const probe::NetworkInfo& n);

// The name NCCL_NET gives aws-ofi-nccl: the one every version of the plugin answers to.
inline constexpr const char* kOfiNetName = "AWS Libfabric";

// Adds NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_NET and the notes about them to `c` (c.multi.nodes > 1). A value
// the profile or -e already set wins, with a note. `nccl`: the NCCL the job runs (nullopt: not known).
void AddNcclEnv(const probe::HostFacts& host, const LocalNet& local, const std::optional<Version>& nccl,
                RunConfig& c);
// The same for the command of `j.target`, with the other nodes' snapshots: NCCL_SOCKET_IFNAME as
// ChooseSocketIfname says, NCCL_IB_HCA of a shared text limited to the ports every node has, and a note for
// each node whose network differs from the target's.
void AddNcclEnv(const JobNodes& j, const std::optional<Version>& nccl, RunConfig& c);

}  // namespace gp::launch
