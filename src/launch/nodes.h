// The nodes of a job on several nodes, as launch knows them (docs/cli.md, "Per-node values"): the node the
// command is for, the other nodes' `doctor --json` snapshots (`--host`, one per node), and this host's route
// toward MASTER_ADDR when this host is one of the nodes. A value measured on this host goes only into this
// host's node's command; another node's values come from its snapshot. A snapshot records each physical
// interface (name, state, IPv4) but not the routes, so another node's interface toward MASTER_ADDR is known
// only by name: NCCL's exact form `=NAME` is used for it only when that node has the interface this host
// routes MASTER_ADDR through.
#pragma once
#include <string>
#include <vector>

#include "launch/nccl_env.h"
#include "probe/host.h"

namespace gp::launch {

struct NodeView {
  std::string where;  // "this host", "the host in b.json"
  const probe::HostFacts* host = nullptr;
  bool here = false;  // this host: JobNodes::local is its own route
};

struct JobNodes {
  bool shared = false;           // one text for every node (Slurm script, Kubernetes Job)
  int nodes = 2;                 // --nodes
  NodeView target;               // the node the command is for (shared: the first node)
  std::vector<NodeView> others;  // the other nodes known from their snapshots
  LocalNet local;                // this host's route toward MASTER_ADDR (why_not: why it is not known)
  bool AllKnown() const { return static_cast<int>(others.size()) + 1 >= nodes; }
  bool HereIsANode() const;
};

// NCCL_SOCKET_IFNAME for the command: `=NAME` (exact) or the exclusion form, and why (a clause).
struct IfnameChoice {
  std::string value;
  bool exact = false;
  std::string why;
};
IfnameChoice ChooseSocketIfname(const JobNodes& j, const std::string& master);

// The snapshot lists a physical interface `name` that is not down and whose IPv4 address is not known to be
// missing.
bool HasInterface(const probe::HostFacts& h, const std::string& name);

// The ports NCCL_IB_HCA names ("mlx5_0:1"), as IbHcaValue lists them.
std::vector<std::string> IbHcaPorts(const probe::NetworkInfo& n);

}  // namespace gp::launch
