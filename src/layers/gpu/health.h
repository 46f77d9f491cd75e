// GPU health in doctor's gpu and driver layers: each GPU function on the bus and NVML's answer for it
// (bus.cc), its memory errors, clock events, power limit and NVLink links (health.cc), and the driver's own
// recovery verdict (recovery.cc). Each finding names its GPU and carries NVIDIA's action as its fix.
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
// The action NVML's recovery field prescribes for `g` (GPU reset, node reboot, drain P2P, drain and reset,
// recover the IMEX domain); nullopt when it is absent, none, or a value gpuprep does not know.
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
// driver layer: NVML_FI_DEV_GET_GPU_RECOVERY_ACTION of each GPU.
void CheckRecoveryActions(const CheckInput& in, LayerReport& r);

}  // namespace gp::layers
