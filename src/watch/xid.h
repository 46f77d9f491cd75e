// The Xid events of a run: the records the kernel log gained since the previous tick (sys/kernel_log.h's
// KmsgFollower on /dev/kmsg), each Xid line (util/kernel_xid.h) given to the GPU whose PCI address it names.
// Pure: the caller reads the log.
#pragma once
#include <string_view>
#include <vector>

#include "watch/sample.h"

namespace gp::watch {

inline constexpr size_t kMaxXidsPerGpuTick = 16;  // events kept per GPU and tick; more are counted only

// Whether NVML's bus id ("00000000:18:00.0") and an Xid line's address ("0000:18:00") name one device:
// domain, bus and device compared as numbers.
bool SamePciDevice(std::string_view nvml_bus_id, std::string_view xid_pci);

struct XidAttach {
  unsigned matched = 0;    // events given to a GPU of the sample
  unsigned unmatched = 0;  // Xid lines for a GPU not watched (another GPU, or --gpu left it out)
  unsigned dropped = 0;    // past kMaxXidsPerGpuTick
};

// Adds each Xid event of `records` (kernel log records as /dev/kmsg hands them out, one per line;
// continuation lines and other messages skipped) to the GPU of `gpus` its address names.
XidAttach AttachXids(std::string_view records, std::vector<GpuSample>& gpus);

}  // namespace gp::watch
