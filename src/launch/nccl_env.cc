// NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_NET, NCCL_IB_GID_INDEX and EFA's notes for one node's command
// (launch/nccl_env.h gives the rules and their source).
#include "launch/nccl_env.h"

#include <algorithm>

#include "launch/nodes.h"
#include "sys/net.h"
#include "util/strings.h"

namespace gp::launch {
namespace {

bool StartsWithAny(const std::string& name, std::initializer_list<const char*> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&name](const char* p) { return name.rfind(p, 0) == 0; });
}

// The variable is the user's (profile or -e): theirs stays, and the note says what gpuprep would have set.
bool UserSet(RunConfig& c, const std::string& name, const std::string& ours, const std::string& why) {
  auto it = std::find_if(c.env.begin(), c.env.end(), [&name](const auto& e) { return e.first == name; });
  if (it == c.env.end()) return false;
  if (it->second != ours)
    c.warnings.push_back(name + "=" + it->second + " from " +
                         (c.origins["env." + name] == Origin::kProfile ? "the profile" : "-e") +
                         " is kept; gpuprep would set " + ours + " (" + why + ")");
  return true;
}

void Set(RunConfig& c, const std::string& name, const std::string& value, Origin o) {
  c.env.emplace_back(name, value);
  c.origins["env." + name] = o;
}

void AddSocketIfname(const JobNodes& j, RunConfig& c) {
  const std::string master =
      c.multi.master_addr.empty() ? "the allocation's first node" : c.multi.master_addr;
  const IfnameChoice choice = ChooseSocketIfname(j, master);
  const Origin origin = choice.exact ? Origin::kHost : Origin::kDefault;
  if (UserSet(c, "NCCL_SOCKET_IFNAME", choice.value, choice.why)) return;
  Set(c, "NCCL_SOCKET_IFNAME", choice.value, origin);
  if (!choice.exact) {
    c.warnings.push_back("NCCL_SOCKET_IFNAME=" + choice.value + ": " + choice.why +
                         "; NCCL then takes any interface but docker and lo. " +
                         (!j.shared ? "Run launch on each node"
                          : j.AllKnown()
                              ? "Run launch on one of the nodes"
                              : "Give every node's snapshot (--host, one per node) and run launch on one "
                                "of them") +
                         " so that it names the interface exactly");
    return;
  }
  if (j.shared || !j.target.here) {  // a name measured here, given to another node
    c.warnings.push_back("NCCL_SOCKET_IFNAME=" + choice.value + ": " + choice.why);
    return;
  }
  const std::string own = NcclOwnInterface(j.local.v4_order);
  if (!own.empty() && own != j.local.route_ifname)
    c.warnings.push_back("NCCL_SOCKET_IFNAME=" + choice.value + ": " + choice.why +
                         "; without it NCCL would take " + own +
                         " (it prefers interfaces starting with ib, then any but docker and lo)");
}

bool ActiveEfa(const probe::NetworkInfo& n) {
  return std::any_of(n.rdma.begin(), n.rdma.end(), [](const probe::RdmaDevice& d) {
    return d.efa && std::any_of(d.ports.begin(), d.ports.end(),
                                [](const probe::RdmaPort& p) { return p.state == "ACTIVE"; });
  });
}

// NCCL_NET pinned to this node's transport; on EFA the plugin's libfabric variables depend on its version,
// which the image does not tell: a note gives the cheatsheet's rows instead of a guess.
void AddNet(const probe::HostFacts& host, RunConfig& c) {
  const NetChoice net = NcclNetValue(host.network);
  if (!UserSet(c, "NCCL_NET", net.value, net.why)) Set(c, "NCCL_NET", net.value, Origin::kHost);
  if (net.value == kOfiNetName)
    c.warnings.push_back(
        "EFA: the image's aws-ofi-nccl version is not known, so no libfabric variable is set. From "
        "aws-ofi-nccl 1.7.0 with libfabric 1.18.0 none is needed; for 1.6.x on p4/p5 set "
        "FI_EFA_USE_DEVICE_RDMA=1; for 1.5.0 and older also FI_PROVIDER=efa and NCCL_PROTO=simple (-e), as "
        "aws-ofi-nccl's EFA cheatsheet (doc/efa-env-var.md) says");
  else if (net.value == "Socket" && !host.network.rdma.empty())
    c.warnings.push_back(
        "NCCL_NET=Socket: this node has RDMA devices but no ACTIVE port NCCL can use (gpuprep doctor --nodes "
        "2 "
        "says why); inter-node traffic goes over TCP");
}

// NCCL_IB_HCA: the command's node's ports; a text every node shares names only the ports every node has
// ACTIVE (another node's are in its snapshot), with a note for each it leaves out.
void AddIbHca(const JobNodes& j, RunConfig& c) {
  std::vector<std::string> ports = IbHcaPorts(j.target.host->network);
  std::vector<std::string> dropped;
  if (j.shared)
    for (const NodeView& n : j.others) {
      const std::vector<std::string> theirs = IbHcaPorts(n.host->network);
      for (auto it = ports.begin(); it != ports.end();) {
        if (std::find(theirs.begin(), theirs.end(), *it) != theirs.end()) {
          ++it;
          continue;
        }
        dropped.push_back(*it + " (not ACTIVE on " + n.where + ")");
        it = ports.erase(it);
      }
    }
  if (!dropped.empty())
    c.warnings.push_back("NCCL_IB_HCA leaves out " + Join(dropped, ", ") +
                         ": every node gets the same value, so it names only the ports ACTIVE on every node");
  if (ports.empty()) return;
  const std::string hca = "=" + Join(ports, ",");
  const std::string why = j.shared && !j.others.empty()
                              ? "the active RDMA ports every node has, named exactly"
                              : "this node's active RDMA ports, named exactly";
  if (!UserSet(c, "NCCL_IB_HCA", hca, why)) Set(c, "NCCL_IB_HCA", hca, Origin::kHost);
}

// Every node must use the network NCCL_NET pins: a node whose snapshot says it has another one stops the job.
void CheckSameNet(const JobNodes& j, RunConfig& c) {
  const NetChoice mine = NcclNetValue(j.target.host->network);
  for (const NodeView& n : j.others) {
    const NetChoice theirs = NcclNetValue(n.host->network);
    if (theirs.value != mine.value)
      c.warnings.push_back("NCCL_NET=" + mine.value + " for " + j.target.where + ", but " + n.where +
                           " would use " + theirs.value + " (" + theirs.why +
                           "): every node must use the same network, or NCCL stops there; fix that node "
                           "(gpuprep doctor --nodes 2 there says why) or set -e NCCL_NET on every node");
  }
}

}  // namespace

NetChoice NcclNetValue(const probe::NetworkInfo& n) {
  if (ActiveEfa(n))
    return {kOfiNetName, "this node's EFA devices are reached through the aws-ofi-nccl plugin"};
  if (!IbHcaValue(n).empty()) return {"IB", "this node has ACTIVE RDMA ports NCCL's IB transport uses"};
  return {"Socket", "this node has no ACTIVE RDMA port"};
}

LocalNet ReadLocalNet(const std::string& master_addr) {
  LocalNet n;
  std::string addr = master_addr;
  if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') addr = addr.substr(1, addr.size() - 2);
  n.measured = true;
  const sys::RouteAnswer r = sys::RouteTo(addr);
  if (r.not_address) {
    n.why_not = "MASTER_ADDR is a name, which launch does not resolve";
    return n;
  }
  if (!r.error.empty()) {
    n.why_not = r.error;
    return n;
  }
  n.route_ifname = r.ifname == "lo" ? sys::InterfaceWithAddress(addr) : r.ifname;
  if (n.route_ifname.empty() || n.route_ifname == "lo") {
    n.route_ifname.clear();
    n.why_not = addr + " is this host's loopback";
    return n;
  }
  if (auto a = sys::LiveInterfaceAddrs()) n.v4_order = a->v4_order;
  return n;
}

std::string NcclOwnInterface(const std::vector<std::string>& v4_order) {
  for (const auto& n : v4_order)
    if (StartsWithAny(n, {"ib"})) return n;
  for (const auto& n : v4_order)
    if (!StartsWithAny(n, {"docker", "lo", "virbr"})) return n;
  for (const auto& n : v4_order)
    if (StartsWithAny(n, {"docker"})) return n;
  for (const auto& n : v4_order)
    if (StartsWithAny(n, {"lo"})) return n;
  return "";
}

std::string IbHcaValue(const probe::NetworkInfo& n) {
  const std::vector<std::string> ports = IbHcaPorts(n);
  return ports.empty() ? "" : "=" + Join(ports, ",");
}

void AddNcclEnv(const probe::HostFacts& host, const LocalNet& local, const std::optional<Version>& nccl,
                RunConfig& c) {
  JobNodes j;
  j.nodes = c.multi.nodes;
  j.target = {"this host", &host, local.measured};
  j.local = local;
  AddNcclEnv(j, nccl, c);
}

void AddNcclEnv(const JobNodes& j, const std::optional<Version>& nccl, RunConfig& c) {
  const probe::HostFacts& host = *j.target.host;
  AddSocketIfname(j, c);
  AddIbHca(j, c);
  AddNet(host, c);
  CheckSameNet(j, c);
  const bool roce = std::any_of(host.network.rdma.begin(), host.network.rdma.end(), [](const auto& d) {
    return std::any_of(d.ports.begin(), d.ports.end(),
                       [](const auto& p) { return p.link_layer == "Ethernet"; });
  });
  // NCCL 2.21 and later choose the RoCE v2 GID themselves; forcing an index is then a cause of errors.
  if (roce && nccl && *nccl < Version::Must("2.21") &&
      std::none_of(c.env.begin(), c.env.end(), [](const auto& e) { return e.first == "NCCL_IB_GID_INDEX"; }))
    c.warnings.push_back(
        "NCCL " + nccl->str() +
        " is older than 2.21 and does not choose the RoCE v2 GID itself: set NCCL_IB_GID_INDEX "
        "(-e) to the index of each port's RoCE v2 GID with an IPv4 address (show_gids lists "
        "them)");
}

}  // namespace gp::launch
