// The network layer's PCIe checks (pcie.cc): ACS on the bridges above the GPUs and RDMA devices, and
// whether each GPU has an RDMA device on its PCIe switch or NUMA node.
#pragma once
#include "layers/check.h"

namespace gp::layers {

// ACS Source Validation or P2P Request/Completion Redirect enabled on a bridge above a GPU or an RDMA
// device: `network.acs-enabled` (a VM, where it is expected, and an unread config space are skips).
void CheckAcs(LayerReport& r, const CheckInput& in);
// A GPU with no RDMA device on its PCIe switch or NUMA node: `network.gpu-nic-far`.
void CheckAffinity(LayerReport& r, const CheckInput& in);

}  // namespace gp::layers
