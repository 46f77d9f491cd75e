// NVML readings (sys/nvml_session.h) -> the GPU half of a Sample: means, rates and ratios. Cumulative
// counters become per-second rates between two readings of the same GPU, wrap-safe at the width NVML
// gives (PCIe fields 197/198: "Value can be wrapped", nvml.h); a delta that implies more than the link
// could carry (a counter reset by a driver reload) is dropped, not reported.
#pragma once
#include <map>
#include <vector>

#include "sys/nvml_session.h"
#include "watch/sample.h"

namespace gp::watch {

// The peak of one direction of a PCIe link: per-lane rate of the generation (PCI-SIG: 2.5, 5, 8, 16,
// 32 GT/s for generations 1-5; 8b/10b encoding up to 2.0, 128b/130b from 3.0) times the lanes. Unset for
// generations it does not know (6 and later use FLIT encoding).
std::optional<double> PcieLinkPeakBytesPerSecond(unsigned generation, unsigned width);
// NVLink: field 90 (MB/s per link, "for active links", read as one direction) times the active links
// (field 165), else, where the driver gives no link states, the links present (field 91). gpuprep's GPU
// catalogue gives no NVLink bandwidth to prefer. The source: kNvlinkPeakActiveLinks or
// kNvlinkPeakLinksPresent (sample.h); unset with the peak.
std::optional<double> NvlinkPeakBytesPerSecond(const sys::NvmlGpu& g);
std::optional<std::string> NvlinkPeakSource(const sys::NvmlGpu& g);

// The difference of two readings of a counter that wraps at `bits`.
uint64_t WrapDelta(uint64_t previous, uint64_t current, unsigned bits);

class GpuSampler {
 public:
  explicit GpuSampler(std::vector<sys::NvmlGpu> gpus) : gpus_(std::move(gpus)), prev_(gpus_.size()) {}
  // One reading per GPU, in the order of the constructor's list.
  std::vector<GpuSample> Convert(const std::vector<sys::NvmlReading>& readings);

 private:
  struct Previous {
    bool have = false;
    int64_t time_us = 0;
    sys::NvmlReading r;
  };
  std::vector<sys::NvmlGpu> gpus_;
  std::vector<Previous> prev_;
};

}  // namespace gp::watch
