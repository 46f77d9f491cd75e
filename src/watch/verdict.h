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
  kUnclassified,  // no rule fits: the record names the closest rule and the conditions it failed
};
const char* VerdictName(VerdictKind k);
std::optional<VerdictKind> VerdictFromName(const std::string& name);
inline constexpr int kVerdictKinds = 10;

enum class Confidence { kHigh, kMedium, kLow };
const char* ConfidenceName(Confidence c);

// The health findings' codes of a throttled verdict's reasons, as doctor names the same clock events:
// the power brake, a thermal slowdown (HW or SW), a HW slowdown without the brake or HW thermal behind
// it (they raise its bit too: said once, by its cause). The power limit and the SW power cap are settings,
// not hardware trouble: no code.
std::vector<std::string> HealthCodesOf(const std::vector<std::string>& reasons);

struct Verdict {
  GpuId gpu;
  std::optional<unsigned> gpu_instance_id;  // a MIG instance, judged on its own
  long long start_ms = 0, end_ms = 0;       // the window [start, end)
  VerdictKind kind = VerdictKind::kHealthy;
  Confidence confidence = Confidence::kLow;
  std::string detail;  // one sentence with the deciding numbers
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();  // the numbers, units in key names
  std::vector<std::string> reasons;                                    // throttled: which reasons
  // The codes of doctor's health findings the verdict is (util/health_codes.h): throttled on a hardware
  // reason; empty otherwise.
  std::vector<std::string> health_codes;
  std::optional<GpuId> straggler_gpu;  // hung_collective: the rank the others wait for
  std::string fix;
  std::vector<std::string> jobs;  // the keys (Job::Key) of the jobs with a process on the GPU in the window
};

struct LostGpu {
  GpuId gpu;
  long long time_ms = 0;  // the first sample that found it lost
};

struct GpuSummary {
  GpuId gpu;
  std::string name;
  std::map<std::string, unsigned> windows;   // verdict name -> windows (an unclassified one included)
  unsigned gaps = 0;                         // samples NVML did not answer in time
  std::map<std::string, double> verdict_ms;  // judged time by verdict (MIG instances share a window)
  double sm_active_sum = 0;                  // GPM SM activity over the ok samples that have it
  unsigned sm_active_samples = 0;
  // Unclassified windows by the rule that came closest and the conditions it failed ("rule: a, b").
  std::map<std::string, unsigned> unclassified_closest;
};

// The cost of a run (watch/cost.h computes it).
struct CostLine {
  double share = 0;  // of the GPU-hours paid, 0-1
  double gpu_hours = 0;
  std::optional<double> amount;  // unset without a price for every GPU
};

struct RunCost {
  double wall_s = 0;
  unsigned gpus = 0;
  double gpu_hours = 0;            // paid: wall_s x gpus / 3600
  std::optional<double> amount;    // gpu_hours at each GPU's price; unset unless every GPU has one
  std::string currency;            // "" for --price-per-gpu-hour or no price
  std::vector<unsigned> unpriced;  // GPU indexes without a price
  std::map<std::string, CostLine> by_verdict;  // every verdict name, "unclassified", "unjudged"
  CostLine idle;                               // idle + idle_memory_held
  CostLine underuse;                           // the underuse verdicts together
  std::optional<double> sm_inactive_share;     // information, not billed; unset without GPM
  double sm_active_guidance = 0.8;
};

// One job's part of a run (watch/jobs.h): the GPUs its processes ran on, the verdicts of those GPUs'
// windows it was in, and the GPU time attributed to it (a GPU's time split equally between the jobs with a
// process on it, sample by sample).
struct JobSummary {
  Job job;                                  // kind "none": the GPU time no process held
  std::vector<unsigned> gpus;               // indexes, ascending
  std::map<std::string, unsigned> windows;  // (GPU, window) pairs it was in, by verdict; "unclassified"
  std::map<size_t, std::map<std::string, double>> verdict_ms;  // by GPU position: its judged time, ms
  std::map<size_t, double> run_share;  // by GPU position: its share of the GPU's read samples (0-1)
  std::optional<std::string> verdict;  // the verdict holding most of its judged time; unset: none judged
  std::optional<RunCost> cost;         // set with the run's cost (watch/jobs.h, PriceJobs)
  size_t folded = 0;                   // kind "other": how many distinct jobs it counts together
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
  std::optional<RunCost> cost;     // set by the run when it ends (watch/cost.h)
  std::vector<JobSummary> jobs;    // in order of first appearance, "none" last
};

}  // namespace gp::watch
