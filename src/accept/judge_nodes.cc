#include "accept/judge_nodes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "nccllog/reader.h"
#include "util/strings.h"

namespace gp::accept {
namespace {

// NCCL's "Using network" names that are RDMA: InfiniBand/RoCE, or a plugin's network (not "Socket").
bool Rdma(const std::string& network) { return !network.empty() && network != "Socket"; }

// This node's ACTIVE RDMA ports ("mlx5_0:1"), the ones NCCL could have used.
std::vector<std::string> ActivePorts(const NodesInfo& n) {
  std::vector<std::string> out;
  for (const auto& p : n.ports)
    if (p.state == "ACTIVE") out.push_back(p.device + ":" + std::to_string(p.port));
  return out;
}

const nccllog::Finding* FindingOf(const nccllog::Summary& s, std::initializer_list<const char*> codes) {
  for (const auto& f : s.findings)
    for (const char* c : codes)
      if (f.code == c) return &f;
  return nullptr;
}

std::string ReasonOf(const nccllog::Finding* f) {
  if (!f) return "";
  return f->fix.empty() ? f->message : f->message + "; " + f->fix;
}

Check TransportCheck(const Recording& rec, const nccllog::Summary& s) {
  Check c;
  c.group = "nodes";
  c.name = "transport";
  c.found = s.network;
  const std::vector<std::string> active = ActivePorts(*rec.nodes);
  if (s.network.empty()) {
    c.status = Status::kSkipped;
    c.reason = "NCCL's log does not say which network it used (no \"Using network\" line)";
  } else if (Rdma(s.network)) {
    c.status = Status::kPass;
    if (!s.ib_devices.empty()) c.found += ", " + std::to_string(s.ib_devices.size()) + " port(s)";
  } else if (!active.empty()) {
    c.status = Status::kFail;
    c.expected = "RDMA, " + std::to_string(active.size()) + " ACTIVE port(s)";
    c.reason = "NCCL ran between the nodes over TCP sockets although this node has ACTIVE RDMA ports (" +
               Join(active, ", ") + ")";
    if (const auto* f = FindingOf(s, {"nccl-log.socket-fallback", "nccl-log.socket"}))
      c.reason += "; " + ReasonOf(f);
  } else {
    c.status = Status::kWarn;
    c.reason =
        "this node has no ACTIVE RDMA port: NCCL runs between the nodes over TCP sockets, at the NIC's speed";
  }
  return c;
}

Check GdrCheck(const nccllog::Summary& s) {
  Check c;
  c.group = "nodes";
  c.name = "gpudirect rdma";
  if (!Rdma(s.network)) {
    c.status = Status::kNotApplicable;
    c.reason = "not over RDMA";
    return c;
  }
  if (s.net_channels == 0) {
    c.status = Status::kSkipped;
    c.reason = "NCCL's log lists no channel over the network";
    return c;
  }
  c.found = std::to_string(s.gdr_channels) + " of " + std::to_string(s.net_channels) + " network channels";
  c.expected = "every network channel";
  c.status = s.gdr_channels == s.net_channels ? Status::kPass
             : s.gdr_channels == 0            ? Status::kFail
                                              : Status::kWarn;
  if (c.status != Status::kPass) c.reason = ReasonOf(FindingOf(s, {"nccl-log.gdr-off"}));
  return c;
}

const Phase* NodesPhase(const Recording& rec) {
  for (const auto& p : rec.phases)
    if (p.phase == "all_reduce_nodes") return &p;
  return nullptr;
}

Check BandwidthCheck(const Recording& rec, const nccllog::Summary& s) {
  Check c;
  c.group = "nodes";
  c.name = "all_reduce_nodes";
  c.unit = "GB/s";
  std::string why;
  std::optional<Value> floor;
  if (s.network == "IB")
    floor = NodesFloor(*rec.nodes, s.ib_devices, &why);
  else
    why = s.network.empty() ? "the network NCCL used is not known"
                            : "no sourced floor for NCCL's " + s.network + " network";
  if (floor) c.floor = floor;
  const Phase* p = NodesPhase(rec);
  if (!p) {
    c.status = Status::kSkipped;
    c.reason = "not measured";
    return c;
  }
  c.measured = p->value;
  c.size = p->bytes;
  c.found = std::to_string(p->peer) + " GPUs on " + std::to_string(p->nodes) + " nodes";
  c.status =
      JudgeValue(p->value, nullptr, c.floor ? &*c.floor : nullptr, nullptr, std::nullopt, 0, &c.reason);
  if (!c.floor) c.reason = why;
  return c;
}

// The codes the transport and GPUDirect checks already judge.
bool Covered(const std::string& code) {
  static const std::set<std::string> kCovered = {"nccl-log.network",         "nccl-log.socket",
                                                 "nccl-log.socket-fallback", "nccl-log.gdr",
                                                 "nccl-log.gdr-off",         "nccl-log.gdr-disabled"};
  return kCovered.count(code) > 0;
}

}  // namespace

const std::vector<PortFloor>& PortFloors() {
  static const std::vector<PortFloor> kFloors = {
      // ND A100 v4: eight 200 Gb/s HDR ports (check_hw_ib 200, line 25), each to write at 185 Gb/s.
      {200, 185,
       "Azure/azurehpc-health-checks@120095246e74e58a4414650c77e6d851520a838f:conf/nd96asr_v4.conf:64 "
       "(check_ib_bw_gdr 185.0)"},
      // ND H100 v5: eight 400 Gb/s NDR ports (check_hw_ib 400, line 19), each to write at 375 Gb/s.
      {400, 375,
       "Azure/azurehpc-health-checks@06114325109659ce3c260b56d46aeab436fcfc15:conf/nd96isr_h100_v5.conf:57 "
       "(check_ib_bw_gdr 375)"},
  };
  return kFloors;
}

std::optional<Value> NodesFloor(const NodesInfo& nodes, const std::vector<std::string>& used_ports,
                                std::string* why) {
  if (used_ports.empty()) {
    *why = "NCCL's log does not list the ports it used";
    return std::nullopt;
  }
  double gbps = 0;
  std::set<std::string> sources;
  for (const std::string& used : used_ports) {  // "mlx5_0:1/IB"
    const std::string name = used.substr(0, used.find('/'));
    const auto port = std::find_if(nodes.ports.begin(), nodes.ports.end(), [&](const NodePort& p) {
      return p.device + ":" + std::to_string(p.port) == name;
    });
    if (port == nodes.ports.end()) {
      *why = "NCCL used " + name + ", which this node's ports do not list";
      return std::nullopt;
    }
    if (port->link_layer != "InfiniBand") {
      *why = name + " is " + port->link_layer + ": no sourced floor for it";
      return std::nullopt;
    }
    const auto f = std::find_if(PortFloors().begin(), PortFloors().end(), [&](const PortFloor& pf) {
      return std::fabs(pf.rate_gbps - port->rate_gbps) < 0.5;
    });
    if (f == PortFloors().end()) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "%g", port->rate_gbps);
      *why = name + " runs at " + rate + " Gb/s: no sourced floor for that rate";
      return std::nullopt;
    }
    gbps += f->floor_gbps;
    sources.insert(f->source);
  }
  Value v;
  v.level = "floor";
  v.quantity = "all_reduce_nodes";
  v.value = gbps / 8;
  v.unit = "GB/s";
  v.kind = "derived";
  v.source = "the sum of the per-port GPUDirect RDMA write floors of the " +
             std::to_string(used_ports.size()) + " port(s) NCCL used: ";
  v.source += Join(std::vector<std::string>(sources.begin(), sources.end()), "; ");
  return v;
}

std::vector<Check> NodesChecks(const Recording& rec) {
  std::vector<Check> out;
  if (!rec.nodes) return out;
  nccllog::Reader reader;
  for (const auto& line : rec.nccl_log) reader.Line(line);
  const nccllog::Summary s = reader.Finish();
  out.push_back(BandwidthCheck(rec, s));
  out.push_back(TransportCheck(rec, s));
  out.push_back(GdrCheck(s));
  for (const auto& f : s.findings) {
    if (Covered(f.code) || (f.level != nccllog::Level::kWarn && f.level != nccllog::Level::kFail)) continue;
    Check c;
    c.group = "nodes";
    c.name = f.code;
    c.status = f.level == nccllog::Level::kFail ? Status::kFail : Status::kWarn;
    c.reason = f.fix.empty() ? f.message : f.message + "; " + f.fix;
    out.push_back(c);
  }
  return out;
}

}  // namespace gp::accept
