// GPU health in doctor's gpu layer: each GPU function on the bus and NVML's answer for it (bus.cc), its
// memory errors, clock events, power limit and NVLink links (health.cc), and what the driver's own recovery
// verdict asks (recovery.cc; the driver layer reports it). Each finding names its GPU and carries NVIDIA's
// action as its fix.
#pragma once
#include <optional>
#include <string>

#include "layers/check.h"

namespace gp::layers {

// "GPU 2 (0000:12:00.0)".
std::string GpuLabel(const probe::Gpu& g);
// Whether a reset of `g` must first stop nvidia-persistenced: NVML's persistence mode for the GPU, else
// whether the host runs the daemon.
bool HeldByPersistence(const probe::HostFacts& host, const probe::Gpu& g);
// "stop the jobs on GPU N, then sudo nvidia-smi -r -i N" (persistence stopped around the reset when it holds
// the GPU: a held GPU refuses the reset).
std::string ResetFix(const probe::HostFacts& host, const probe::Gpu& g);
// What NVML's recovery field says of `g` (GPU reset, node reboot, drain P2P, drain and reset, recover the
// IMEX domain): how bad, what the driver asks, the action as the fix; nullopt when it is absent, none, or a
// value gpuprep does not know. The driver layer's finding (layers/driver/recovery.cc).
struct RecoveryVerdict {
  Status status;
  std::string message;
  std::string fix;
};
std::optional<RecoveryVerdict> RecoveryFor(const probe::HostFacts& host, const probe::Gpu& g);
// Its fix alone.
std::optional<std::string> RecoveryFix(const probe::HostFacts& host, const probe::Gpu& g);
// `fix`, unless the driver's recovery action for `g` prescribes its own.
std::string FixFor(const probe::HostFacts& host, const probe::Gpu& g, const std::string& fix);

// Marks the findings `r` gained since it had `from` as being about `g` (Finding::gpu_pci).
void MarkGpu(LayerReport& r, size_t from, const probe::Gpu& g);

// gpu layer: off the bus, unbound, unknown to NVML, lost, reset required; the PCIe link's width and speed.
void CheckGpuBus(const CheckInput& in, LayerReport& r);
// gpu layer: row remapping, retired pages, uncorrected ECC, ECC off; clock events; power limit; NVLink.
void CheckGpuHealth(const CheckInput& in, LayerReport& r);
// gpu layer: the Xid events of the boot (xid.cc), each mapped to its GPU and judged by NVIDIA's catalogue.
void CheckXidHistory(const CheckInput& in, LayerReport& r);

}  // namespace gp::layers
