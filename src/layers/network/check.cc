// network layer: what a job on two or more nodes needs of this host's RDMA network. Shown on hosts with RDMA
// devices, and as one line (TCP at the NIC's speed) on hosts with a physical NIC and no RDMA. Unless the user
// says the host runs jobs on several nodes (doctor --nodes N, N > 1), every finding is at most a warning: an
// HGX used as one node never fails for its network. With it, the layer is shown on every host and its faults
// fail (docs/doctor.md, "The network layer").
#include "layers/check.h"

#include <algorithm>
#include <map>

#include "layers/network/pcie.h"
#include "layers/table.h"
#include "util/strings.h"

namespace gp::layers {
namespace {

bool Shown(const probe::HostFacts& h) { return !h.network.rdma.empty() || !h.network.nics.empty(); }

const probe::NetDevice* Nic(const probe::NetworkInfo& n, const std::string& name) {
  for (const auto& d : n.nics)
    if (d.name == name) return &d;
  return nullptr;
}

std::string Speed(const probe::NetDevice& d) {
  if (!d.speed_mbps) return d.name + " (speed not reported)";
  const int64_t m = *d.speed_mbps;
  return d.name + " (" + (m % 1000 == 0 ? std::to_string(m / 1000) + " Gb/s" : std::to_string(m) + " Mb/s") +
         ")";
}

// The one line of a host without RDMA: the NICs traffic between nodes would use, fastest first (those up
// with an IPv4 address when addresses are known, else those up).
std::string TcpLine(const probe::NetworkInfo& n) {
  std::string base = "no RDMA device: traffic between nodes goes over TCP at the NIC's speed";
  std::vector<const probe::NetDevice*> up;
  for (const auto& d : n.nics)
    if (d.operstate == "up" && d.ipv4.value_or(true)) up.push_back(&d);
  if (up.empty()) return base;
  std::stable_sort(up.begin(), up.end(), [](const probe::NetDevice* a, const probe::NetDevice* b) {
    return a->speed_mbps.value_or(-1) > b->speed_mbps.value_or(-1);
  });
  std::vector<std::string> named;
  for (size_t i = 0; i < up.size() && i < 3; ++i) named.push_back(Speed(*up[i]));
  return base + ": " + Join(named, ", ") + (up.size() > 3 ? ", ..." : "");
}

std::string PortName(const probe::RdmaDevice& d, const probe::RdmaPort& p) {
  return d.name + " port " + std::to_string(p.number);
}

bool IsRoce(const probe::RdmaPort& p) { return p.link_layer == "Ethernet"; }

// A port that is not ACTIVE, with the fix its physical state points to.
void CheckPortState(LayerReport& r, const probe::RdmaDevice& d, const probe::RdmaPort& p) {
  if (p.state == "ACTIVE") return;
  const std::string name = PortName(d, p);
  const std::string what = name + " is " + (p.state.empty() ? "in an unknown state" : p.state) +
                           (p.phys_state.empty() ? "" : " (physical state " + p.phys_state + ")") +
                           ": NCCL does not use it";
  std::string fix;
  if (!p.phys_state.empty() && p.phys_state != "LinkUp")
    fix = "check the cable of " + name + " and the switch port it goes to (ibstat " + d.name +
          "); if it stays down, ask the provider, or leave it out with NCCL_IB_HCA";
  else if (!IsRoce(p) && (p.state == "INIT" || p.state == "ARMED"))
    fix =
        "the link is up but no subnet manager has configured it: run a subnet manager on the fabric "
        "(opensm), or ask the provider";
  else if (IsRoce(p) && !p.netdev.empty())
    fix = "bring its network device up: sudo ip link set " + p.netdev + " up";
  else
    fix = "check the port with ibstat " + d.name + ", or leave it out with NCCL_IB_HCA";
  r.Add("network.port-down", Status::kWarn, what, fix);
}

void CheckRoce(LayerReport& r, const probe::NetworkInfo& n, const probe::RdmaDevice& d,
               const probe::RdmaPort& p) {
  if (!IsRoce(p) || p.state != "ACTIVE") return;
  const std::string name = PortName(d, p);
  const probe::NetDevice* nic = p.netdev.empty() ? nullptr : Nic(n, p.netdev);
  if (!p.roce_v2_ipv4 && nic && nic->ipv4 == false) {
    r.Add("network.netdev-no-address", Status::kWarn,
          name + " (RoCE): its network device " + p.netdev +
              " has no IPv4 address, so the port has no IPv4-mapped RoCE v2 GID and NCCL finds no routable "
              "GID on it",
          "give " + p.netdev +
              " an IPv4 address on the subnet the other nodes use (in netplan, or sudo ip addr add "
              "ADDRESS/PREFIX dev " +
              p.netdev + "); the kernel then adds the RoCE v2 GID");
  } else if (!p.roce_v2_ipv4) {
    const std::string dev =
        p.netdev.empty() ? "the port's network device (ls /sys/class/infiniband/" + d.name + "/device/net)"
                         : p.netdev;
    r.Add("network.roce-no-v2-gid", Status::kWarn,
          name + " (RoCE) has no RoCE v2 GID with an IPv4 address: NCCL finds no routable GID on it",
          "give " + dev +
              " an IPv4 address on the subnet the other nodes use (the kernel then adds the RoCE v2 "
              "GID; check: grep -H . /sys/class/infiniband/" +
              d.name + "/ports/" + std::to_string(p.number) + "/gid_attrs/types/*)");
  }
  if (!p.netdev.empty() && !p.netdev_state.empty() && p.netdev_state != "up")
    r.Add("network.netdev-down", Status::kWarn,
          name + "'s network device " + p.netdev + " is " + p.netdev_state,
          "sudo ip link set " + p.netdev + " up");
}

// GPUDirect RDMA, judged as NCCL judges it (v2.30.7-1 src/transport/net_ib/gdr.cc): the peer-memory module
// at one of its sysfs paths, else DMA-BUF, which needs the open kernel modules and is confirmed by NCCL at
// run time.
void CheckGdr(LayerReport& r, const CheckInput& in, bool any_verbs) {
  if (!any_verbs || in.host.gpus.empty()) return;
  const probe::NetworkInfo& n = in.host.network;
  if (n.peermem) {
    r.Add("network.gdr", Status::kOk,
          "GPUDirect RDMA: the peer-memory module is loaded (" + n.peermem_path + ")");
  } else if (!in.host.driver.module.loaded) {
    r.Add("network.gdr-not-judged", Status::kSkip,
          "GPUDirect RDMA not judged: the NVIDIA kernel module is not loaded");
  } else if (in.host.driver.module.open) {
    r.Add("network.gdr-dmabuf", Status::kOk,
          "GPUDirect RDMA: no peer-memory module, but the open kernel modules allow DMA-BUF (NCCL confirms "
          "the kernel's support when a job starts)");
  } else {
    r.Add(
        "network.gdr-off", Status::kWarn,
        "GPUDirect RDMA is off: no peer-memory module (nvidia-peermem) is loaded and the proprietary kernel "
        "modules have no DMA-BUF, so inter-node traffic is copied through host memory",
        "sudo modprobe nvidia-peermem && echo nvidia-peermem | sudo tee "
        "/etc/modules-load.d/nvidia-peermem.conf");
  }
}

std::string Found(const probe::NetworkInfo& n) {
  std::map<std::string, int> kinds;
  std::string rate;
  for (const auto& d : n.rdma) {
    if (d.efa) {
      ++kinds["EFA"];
      continue;
    }
    for (const auto& p : d.ports) {
      ++kinds[p.link_layer == "Ethernet" ? "RoCE" : p.link_layer == "InfiniBand" ? "InfiniBand" : "other"];
      if (rate.empty() && p.state == "ACTIVE") rate = p.rate;
    }
  }
  std::vector<std::string> parts;
  parts.reserve(kinds.size());
  for (const auto& [k, c] : kinds)
    parts.push_back(std::to_string(c) + " " + k + (k == "EFA" ? " device" : " port") + (c == 1 ? "" : "s"));
  std::string out = Join(parts, ", ");
  if (!rate.empty()) out += " (" + rate + ")";
  return out;
}

// A host without RDMA for a job on several nodes: it runs over TCP (a warning), or not at all when no NIC is
// up with an address.
void NoRdmaForNodes(LayerReport& r, const probe::NetworkInfo& n, int nodes) {
  const bool reachable = std::any_of(n.nics.begin(), n.nics.end(), [](const probe::NetDevice& d) {
    return d.operstate == "up" && d.ipv4.value_or(true);
  });
  const std::string jobs = "a job on " + std::to_string(nodes) + " nodes";
  if (!reachable) {
    const bool any_up = std::any_of(n.nics.begin(), n.nics.end(),
                                    [](const probe::NetDevice& d) { return d.operstate == "up"; });
    r.Add("network.no-nic", Status::kFail,
          std::string(any_up ? "no physical network device that is up has an IPv4 address"
                             : "no physical network device is up") +
              ": " + jobs + " cannot reach the other nodes",
          "bring up the NIC that links the nodes and give it an address on their subnet (in netplan, or sudo "
          "ip link set NAME up and sudo ip addr add ADDRESS/PREFIX dev NAME)");
    return;
  }
  r.Add(
      "network.no-rdma", Status::kWarn, TcpLine(n) + "; " + jobs + " runs, far slower than over RDMA",
      "for RDMA between nodes use servers with InfiniBand or RoCE NICs; over TCP, set NCCL_SOCKET_IFNAME to "
      "the NIC that links the nodes (gpuprep launch --nodes does)");
}

// With several nodes the faults fail. The distance between a GPU and its nearest NIC is how the server is
// built, not a fault to fix, so it stays a warning.
LayerReport Strict(const LayerReport& in) {
  LayerReport r;
  r.name = in.name;
  r.found = in.found;
  r.wanted = in.wanted;
  for (const Finding& f : in.findings) {
    const bool fault = f.status == Status::kWarn && f.code != "network.gpu-nic-far";
    r.Add(f.code, fault ? Status::kFail : f.status, f.message, f.fix);
  }
  return r;
}

}  // namespace

LayerReport CheckNetwork(const CheckInput& in) {
  LayerReport r;
  r.name = "network";
  const probe::NetworkInfo& n = in.host.network;
  if (n.rdma.empty()) {
    if (in.nodes > 1)
      NoRdmaForNodes(r, n, in.nodes);
    else
      r.Add("network.no-rdma", Status::kOk, TcpLine(n));
    return r;
  }
  r.wanted = "RDMA ports active; GPUDirect RDMA";
  r.found = Found(n);
  int active = 0, ports = 0, efa = 0;
  bool any_verbs = false;
  for (const auto& d : n.rdma) {
    if (d.efa) {
      ++efa;
      continue;
    }
    any_verbs = true;
    if (d.ports.empty())
      r.Add("network.no-ports", Status::kWarn, "RDMA device " + d.name + " lists no port",
            "check the device with ibstat " + d.name + " and its driver (" +
                (d.driver.empty() ? std::string("unknown") : d.driver) + ")");
    for (const auto& p : d.ports) {
      ++ports;
      if (p.state == "ACTIVE") ++active;
      CheckPortState(r, d, p);
      CheckRoce(r, n, d, p);
    }
  }
  if (ports > 0 && active > 0)
    r.Add("network.ports", Status::kOk,
          std::to_string(active) + " of " + std::to_string(ports) + " RDMA ports active");
  if (efa > 0)
    r.Add("network.efa", Status::kOk,
          std::to_string(efa) + " AWS EFA device" + (efa == 1 ? "" : "s") +
              ": NCCL reaches EFA only through the aws-ofi-nccl network plugin, which the job's image must "
              "carry "
              "(without it NCCL falls back to sockets; gpuprep nccl-log shows which network a job used)");
  CheckGdr(r, in, any_verbs);
  CheckAcs(r, in);
  CheckAffinity(r, in);
  if (in.nodes > 1) {
    r.wanted += " (a job on " + std::to_string(in.nodes) + " nodes)";
    return Strict(r);
  }
  return r;
}

extern const Layer kNetworkLayer = {"network", CheckNetwork, Shown, nullptr, nullptr, nullptr};

}  // namespace gp::layers
