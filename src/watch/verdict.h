// What the rules conclude about one GPU (or one MIG instance) over one window, and the run's summary:
// the values of the `verdict` and `summary` records (docs/json.md, "watch"). The verdict names are a
// contract scripts switch on.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "watch/sample.h"

namespace gp::watch {

enum class VerdictKind {
  kIdle,
  kIdleMemoryHeld,
  kInputBound,
  kLaunchOrSmallBatch,
  kCommunicationBound,
  kHungCollective,
  kThrottled,
  kHealthy,
  kActivityUnknown,
};
const char* VerdictName(VerdictKind k);
std::optional<VerdictKind> VerdictFromName(const std::string& name);
inline constexpr int kVerdictKinds = 9;

enum class Confidence { kHigh, kMedium, kLow };
const char* ConfidenceName(Confidence c);

struct Verdict {
  GpuId gpu;
  std::optional<unsigned> gpu_instance_id;  // a MIG instance, judged on its own
  long long start_ms = 0, end_ms = 0;       // the window [start, end)
  VerdictKind kind = VerdictKind::kHealthy;
  Confidence confidence = Confidence::kLow;
  std::string detail;  // one sentence with the deciding numbers
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();  // the numbers, units in key names
  std::vector<std::string> reasons;                                    // throttled: which reasons
  std::optional<GpuId> straggler_gpu;  // hung_collective: the rank the others wait for
  std::string fix;
};

struct LostGpu {
  GpuId gpu;
  long long time_ms = 0;  // the first sample that found it lost
};

struct GpuSummary {
  GpuId gpu;
  std::string name;
  std::map<std::string, unsigned> windows;  // verdict name -> windows; "unclassified" for none
  unsigned gaps = 0;                        // samples NVML did not answer in time
};

struct Summary {
  long long start_ms = 0, end_ms = 0;
  long long interval_ms = 0, window_ms = 0;
  unsigned samples = 0;
  bool judged = false;
  std::optional<std::string> reason;  // why nothing was judged (a run shorter than one window)
  unsigned windows = 0;
  std::vector<GpuSummary> gpus;
  std::vector<LostGpu> lost_gpus;
  std::vector<std::string> notes;  // once-per-run remarks: container, PSI absent, ...
};

}  // namespace gp::watch
