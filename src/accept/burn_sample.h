// The burn seen by watch's sampler: the GPU samples taken while the burn ran (clocks, power, the
// clock-event reasons) summarised per GPU into the recording's burn_clocks record (docs/json.md): the SM
// clock's median and minimum, the power's and the GPU temperature's median and maximum, and each reason's
// share of the readings.
// Pure: samples in, a record out.
#pragma once
#include <string>
#include <vector>

#include "accept/record.h"
#include "watch/sample.h"

namespace gp::accept {

// One GPU's readings during the burn (those in a gap or of a lost GPU are counted out), and the Xids NVML
// reported for it.
BurnClocks SummariseBurnClocks(int gpu, const std::vector<watch::GpuSample>& samples,
                               const std::vector<BurnXid>& xids = {});
// The record as one JSON line (no newline), as ParseRecording reads it.
std::string BurnClocksLine(const BurnClocks& c);

}  // namespace gp::accept
