// ACS and the NIC-to-GPU affinity, from the bridges and NUMA nodes the probe read (probe/network_pci.cc).
// ACS redirects peer-to-peer traffic (GPU to GPU, NIC to GPU memory) up to the root complex, which NCCL's
// troubleshooting guide names as a cause of low bandwidth or hangs ("PCI Access Control Services (ACS)",
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html): on bare metal it is to be
// disabled, in a virtual machine it is how the hypervisor isolates devices and is expected.
#include "layers/network/pcie.h"

#include <set>

#include "util/strings.h"

namespace gp::layers {
namespace {

// ACS Control bits (PCIe Base Specification, ACS Extended Capability): Source Validation, P2P Request
// Redirect, P2P Completion Redirect.
constexpr uint16_t kAcsSourceValidation = 1u << 0;
constexpr uint16_t kAcsRequestRedirect = 1u << 2;
constexpr uint16_t kAcsCompletionRedirect = 1u << 3;
constexpr size_t kNamed = 4;  // bridges named in one message

std::string Enabled(uint16_t ctrl) {
  std::vector<std::string> on;
  if (ctrl & kAcsSourceValidation) on.push_back("SrcValid");
  if (ctrl & kAcsRequestRedirect) on.push_back("ReqRedir");
  if (ctrl & kAcsCompletionRedirect) on.push_back("CmpltRedir");
  return Join(on, ",");
}

std::optional<int> NumaOf(const probe::HostFacts& h, const std::string& pci) {
  for (const auto& d : h.nvidia_pci)
    if (d.address == pci) return d.numa_node;
  return std::nullopt;
}

// The bridges of a function below its root port: those of a PCIe switch.
std::set<std::string> SwitchBridges(const probe::NetworkInfo& n, const std::string& pci) {
  auto it = n.upstream.find(pci);
  if (it == n.upstream.end() || it->second.size() < 2) return {};
  return {it->second.begin() + 1, it->second.end()};
}

}  // namespace

void CheckAcs(LayerReport& r, const CheckInput& in) {
  const probe::NetworkInfo& n = in.host.network;
  if (in.host.gpus.empty() || n.bridges.empty()) return;
  if (!n.vm.empty()) {
    r.Add("network.acs-vm", Status::kSkip,
          "ACS not judged: this is a virtual machine (" + n.vm + "), where the hypervisor keeps ACS on");
    return;
  }
  if (!n.acs_skip.empty()) {
    r.Add("network.acs-not-read", Status::kSkip, "ACS not judged: " + n.acs_skip);
    return;
  }
  std::vector<std::string> on;
  std::string first;  // a PCI address (the probe and the snapshot reader check its form): safe in a command
  for (const auto& b : n.bridges)
    if (b.acs_ctrl && (*b.acs_ctrl & (kAcsSourceValidation | kAcsRequestRedirect | kAcsCompletionRedirect))) {
      on.push_back(b.address + " (" + Enabled(*b.acs_ctrl) + ")");
      if (first.empty()) first = b.address;
    }
  if (on.empty()) {
    r.Add("network.acs-off", Status::kOk,
          "ACS redirect off on the " + std::to_string(n.bridges.size()) +
              " PCIe bridges above the GPUs and RDMA devices");
    return;
  }
  const size_t count = on.size();
  if (on.size() > kNamed) {
    on.resize(kNamed);
    on.push_back("...");
  }
  r.Add(
      "network.acs-enabled", Status::kWarn,
      "ACS is on at " + std::to_string(count) + " PCIe bridge" + (count == 1 ? "" : "s") +
          " above the GPUs and RDMA devices (" + Join(on, ", ") +
          "): peer-to-peer and GPUDirect RDMA traffic is sent up to the CPU, at a fraction of the bandwidth",
      "disable ACS, or IO virtualization (VT-d / IOMMU), in the BIOS; or clear it after every boot on each "
      "bridge named (the first: sudo setpci -s " +
          first +
          " ECAP_ACS+0x6.w=0000), as NCCL's troubleshooting guide says under \"PCI Access Control Services "
          "(ACS)\"");
}

void CheckAffinity(LayerReport& r, const CheckInput& in) {
  const probe::HostFacts& h = in.host;
  const probe::NetworkInfo& n = h.network;
  std::vector<const probe::RdmaDevice*> nics;
  for (const auto& d : n.rdma)
    if (!d.pci.empty()) nics.push_back(&d);
  if (h.gpus.empty() || nics.empty()) return;
  if (!n.vm.empty()) {
    r.Add(
        "network.affinity-not-judged", Status::kSkip,
        "NIC-to-GPU affinity not judged: a virtual machine's PCIe layout is the hypervisor's (" + n.vm + ")");
    return;
  }
  bool nic_numa = false;
  for (const auto* d : nics) nic_numa = nic_numa || d->numa_node.has_value();
  std::vector<std::string> far, unknown;
  int by_switch = 0, by_numa = 0;
  for (const auto& g : h.gpus) {
    const auto gpu_switch = SwitchBridges(n, g.pci);
    const auto gpu_numa = NumaOf(h, g.pci);
    bool same_switch = false, same_numa = false;
    for (const auto* d : nics) {
      for (const auto& b : SwitchBridges(n, d->pci)) same_switch = same_switch || gpu_switch.count(b) > 0;
      same_numa = same_numa || (gpu_numa && d->numa_node && *gpu_numa == *d->numa_node);
    }
    const std::string name = "GPU " + std::to_string(g.index) + " (" + g.pci + ")";
    if (same_switch)
      ++by_switch;
    else if (same_numa)
      ++by_numa;
    else if (!gpu_numa || !nic_numa)
      unknown.push_back(name);
    else
      far.push_back(name);
  }
  if (!far.empty())
    r.Add("network.gpu-nic-far", Status::kWarn,
          Join(far, ", ") + (far.size() == 1 ? " has" : " have") +
              " no RDMA device on its PCIe switch or NUMA node: in a job on more than one node its traffic "
              "crosses the CPUs' interconnect",
          "nothing to install: this is how the server is built (nvidia-smi topo -m shows it); check that "
          "every NIC is enabled in the BIOS, and with NCCL_IB_HCA leave no NIC out");
  if (!unknown.empty())
    r.Add("network.affinity-not-judged", Status::kSkip,
          "NIC-to-GPU affinity not judged for " + Join(unknown, ", ") +
              ": no RDMA device shares its PCIe switch, and the NUMA nodes are not known");
  if (far.empty() && by_switch + by_numa > 0)
    r.Add("network.gpu-nic-affinity", Status::kOk,
          "every GPU has an RDMA device on its PCIe switch (" + std::to_string(by_switch) +
              ") or NUMA node (" + std::to_string(by_numa) + ")");
}

}  // namespace gp::layers
