// Decoding nvmlDeviceGetComputeRunningProcesses_v3's answer without trusting its entry size. The header
// declares 24-byte entries; R535's first releases wrote 32-byte ones through the same symbol ("an
// inadvertent ABI break in the 535 driver", pynvml PR 48; nvitop PR 79) and one later driver 16-byte ones
// (nvitop PR 226). Read with the wrong stride the list shows scrambled PIDs. The caller hands NVML a
// zeroed buffer with room for `capacity` entries of the largest stride, so no stride can overrun it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sys/nvml_session.h"

namespace gp::sys {

struct DecodedProcesses {
  size_t stride = 0;  // 24, 32 or 16
  std::vector<NvmlProcess> processes;
};

// Picks the stride under which all `count` entries are plausible (PID 1..2^22, memory at most
// `memory_total` or NOT_AVAILABLE, MIG instance ids 0xFFFFFFFF or small), preferring the one under which
// most PIDs are visible (`pid_visible`, may be empty), then 24, 32, 16. With no plausible stride the
// declared 24 is used and entries with PID 0 are dropped.
DecodedProcesses DecodeProcesses(const std::vector<uint8_t>& buffer, unsigned count, uint64_t memory_total,
                                 const std::function<bool(unsigned)>& pid_visible);

}  // namespace gp::sys
