// Which NCCL_SOCKET_IFNAME a node's command gets, from this host's route and the other nodes' snapshots
// (launch/nodes.h gives the rule).
#include "launch/nodes.h"

#include <algorithm>

#include "util/strings.h"

namespace gp::launch {

bool JobNodes::HereIsANode() const {
  return target.here || std::any_of(others.begin(), others.end(), [](const NodeView& n) { return n.here; });
}

bool HasInterface(const probe::HostFacts& h, const std::string& name) {
  return std::any_of(h.network.nics.begin(), h.network.nics.end(), [&name](const probe::NetDevice& d) {
    return d.name == name && d.operstate != "down" && d.ipv4 != std::optional<bool>(false);
  });
}

std::vector<std::string> IbHcaPorts(const probe::NetworkInfo& n) {
  std::vector<std::string> ports;
  for (const auto& d : n.rdma) {
    if (d.efa) continue;
    for (const auto& p : d.ports) {
      if (p.state != "ACTIVE") continue;
      const bool ib = p.link_layer == "InfiniBand";
      const bool roce = p.link_layer == "Ethernet" && p.roce_v2_ipv4;
      if (ib || roce) ports.push_back(d.name + ":" + std::to_string(p.number));
    }
  }
  return ports;
}

IfnameChoice ChooseSocketIfname(const JobNodes& j, const std::string& master) {
  const std::string x = j.local.route_ifname;
  const auto unknown = [&master](const std::string& reason) {
    return IfnameChoice{
        kSocketIfnameExclude, false,
        "the interface toward " + master + " is not known (" + (reason.empty() ? "not read" : reason) + ")"};
  };
  if (!j.shared && j.target.here) {
    if (x.empty()) return unknown(j.local.why_not);
    return {"=" + x, true, "this host routes " + master + " through " + x};
  }
  // The command runs on nodes other than this host: they get x only when each of them has it.
  if (!j.HereIsANode() || x.empty()) return unknown(j.local.why_not);
  if (j.shared && !j.AllKnown())
    return unknown("the other nodes' snapshots are not given (--host, one per node)");
  std::vector<const NodeView*> away;
  if (!j.target.here) away.push_back(&j.target);
  if (j.shared)
    for (const NodeView& n : j.others)
      if (!n.here) away.push_back(&n);
  std::vector<std::string> where;
  for (const NodeView* n : away) {
    if (!HasInterface(*n->host, x))
      return unknown("this host routes it through " + x + ", and " + n->where + " has no interface " + x);
    where.push_back(n->where);
  }
  return {"=" + x, true,
          "this host routes " + master + " through " + x + ", and " + Join(where, ", ") +
              " has an interface " + x + " too (a snapshot does not record its routes)"};
}

}  // namespace gp::launch
