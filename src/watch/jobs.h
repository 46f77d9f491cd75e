// Per-job grouping on a shared host: which jobs (watch/job.h names them from their cgroups) held each
// GPU, sample by sample, and what that makes of each job's verdicts and cost. A job's GPUs are those its
// processes ran on. A GPU's time is split between jobs per sample: every sample in which NVML read the
// GPU's process list counts one, shared equally between the distinct jobs with a process on it (by job,
// not by process: a job with a launcher and a worker on one GPU holds it once), or to "none" when no
// process held it; samples in which the GPU was not read (a gap, lost) count for nobody (a window, or a
// run, in which it was never read is all "none"). Each judged window's time (as the GPU's own summary
// counts it) goes to the jobs by their shares of that window's samples; time no window judged goes by
// their shares of all the GPU's samples. So the jobs' GPU time,
// "none" included, adds up to the run's, verdict by verdict. A process without a job in its record (a
// recording made before grouping) is grouped as "unknown".
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "watch/sample.h"
#include "watch/verdict.h"

namespace gp::watch {

// A job key -> its share of a GPU's time over some samples; sums to 1 ("none" holds it all when no sample
// read the GPU).
using Shares = std::map<std::string, double>;

inline constexpr const char* kNoJob = "none";
// The distinct jobs a run keeps apart (gpuprep's own bound, so that a recording of many short jobs costs
// linear time and bounded output); the jobs seen after them are counted together as one "other" job.
inline constexpr size_t kMaxJobs = 1000;
inline constexpr const char* kOtherJobs = "other";

class JobLedger {
 public:
  // One sample: the jobs' identities and each GPU's run-long shares.
  void AddSample(const Sample& s);
  // The shares of GPU position `position` over a window's samples.
  static Shares WindowShares(const std::vector<Sample>& window, size_t position);
  // A judged window of GPU position `position`: the time each verdict got (empty: the GPU was lost),
  // `unclassified` when no rule fit.
  void AddWindow(size_t position, const Shares& shares,
                 const std::vector<std::pair<std::string, double>>& verdict_ms);
  // Every job kept, in order of first appearance, then "other" (the jobs past kMaxJobs), "none" last
  // (when it held any time). Linear in the jobs kept: made once, at the end of a run.
  std::vector<JobSummary> Jobs() const;
  // How many distinct jobs were counted as "other".
  size_t Folded() const { return folded_.size(); }

 private:
  JobSummary& Entry(const std::string& key);
  // The key a job is counted under: its own while fewer than kMaxJobs are kept (or it is one of them),
  // else "other". `add` records a new job; without it an unseen key is "other".
  std::string Held(const std::string& key, bool add);

  std::map<std::string, JobSummary> jobs_;
  std::vector<std::string> order_;
  std::map<size_t, Shares> presence_;  // GPU position -> key -> samples (fractional)
  std::map<size_t, double> read_;      // GPU position -> samples in which it was read
  std::set<std::string> folded_;       // the keys counted as "other"
};

// Sets each job's cost in `s` (the run's cost must be set): its judged time per GPU and its share of each
// GPU's unjudged time (wall time minus the GPU's judged time), at that GPU's price (`price[i]` for
// s.gpus[i]).
void PriceJobs(Summary& s, const std::vector<std::optional<double>>& price, const std::string& currency,
               double sm_active_guidance);

nlohmann::ordered_json JobsJson(const std::vector<JobSummary>& jobs);
// "  jobs:" lines for the text summary (terminal-safe).
std::string RenderJobsText(const std::vector<JobSummary>& jobs);

}  // namespace gp::watch
