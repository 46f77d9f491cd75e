// The stable codes of the GPU health findings that more than one verb gives: doctor's gpu layer (and
// `doctor --health`, its protocols and textfile) and watch (a lost GPU, a throttled verdict's hardware
// reasons). One definition, so the two can never name one finding differently. The codes are a contract
// scripts and alerts match on (docs/doctor.md, the codes table).
#pragma once

namespace gp::health_codes {

// NVML answers NVML_ERROR_GPU_IS_LOST for the GPU: fallen off the bus or otherwise inaccessible.
inline constexpr const char* kGpuLost = "gpu.lost";
// Clock event 0x80: the hardware power brake, an external signal (usually the node's power supply).
inline constexpr const char* kClocksPowerBrake = "gpu.clocks-power-brake";
// Clock events 0x40 (HW thermal slowdown) and 0x20 (SW thermal slowdown).
inline constexpr const char* kClocksThermal = "gpu.clocks-thermal";
// Clock event 0x8 (HW slowdown) without the brake or a HW thermal slowdown, which raise it too.
inline constexpr const char* kClocksHwSlowdown = "gpu.clocks-hw-slowdown";

}  // namespace gp::health_codes
