// `watch --replay FILE`: any bytes, line by line -> records or a gp::FileError (PATH:LINE:COL). A sample
// that reads must write back to the same record, and the judge must take any such samples (zero limits,
// huge counters, empty lists) without a crash, a NaN in its JSON or another exception type; the jobs'
// GPU time must add up to the run's. The same bytes as a /proc/PID/cgroup file: the job it names passes
// the reader's check and reads back from a sample record as itself.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/error.h"
#include "watch/cost.h"
#include "watch/job.h"
#include "watch/jobs.h"
#include "watch/jsonl.h"
#include "watch/judge.h"

namespace {

void CgroupFile(const std::string& text) {
  gp::watch::Job job = gp::watch::JobFromProcCgroup(text);
  if (!gp::watch::CheckJob(job).empty()) std::abort();
  gp::watch::Sample s;
  s.time_ms = 1;
  s.interval_ms = 1000;
  s.window_ms = 2000;
  gp::watch::GpuSample g;
  g.processes = std::vector<gp::watch::GpuProcess>{{1, std::nullopt, std::nullopt, job}};
  s.gpus.push_back(g);
  const std::string line = gp::watch::SampleJson(s).dump();
  const auto back = gp::watch::ParseRecord(line, "cgroup", 1).sample.gpus.at(0).processes->at(0).job;
  if (!back || back->Key() != job.Key() || back->cgroup != job.cgroup || back->reason != job.reason)
    std::abort();
}

// The jobs' GPU-hours add up to the run's (watch/jobs.h).
void JobsAddUp(gp::watch::Summary s) {
  std::vector<std::optional<double>> prices(s.gpus.size(), 1.0);
  s.cost = gp::watch::CostOfRun(s, prices, "", 0.8);
  gp::watch::PriceJobs(s, prices, "", 0.8);
  double sum = 0;
  for (const auto& j : s.jobs) sum += j.cost ? j.cost->gpu_hours : 0;
  if (!s.gpus.empty() && std::fabs(sum - s.cost->gpu_hours) > 1e-6 * std::max(1.0, s.cost->gpu_hours))
    std::abort();
  (void)gp::watch::SummaryJson(s).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CgroupFile(text);
  gp::watch::Judge judge({}, 2000);
  std::string first_gpus;
  size_t start = 0, number = 0;
  while (start <= text.size() && number < 64) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    ++number;
    try {
      gp::watch::Record r = gp::watch::ParseRecord(line, "fuzz.jsonl", number);
      if (r.type != gp::watch::Record::Type::kSample) continue;
      const std::string again = gp::watch::SampleJson(r.sample).dump();
      if (gp::watch::SampleJson(gp::watch::ParseRecord(again, "again", 1).sample).dump() != again)
        std::abort();
      std::string gpus;
      for (const auto& g : r.sample.gpus) gpus += std::to_string(g.id.index) + "/" + g.id.uuid + ",";
      if (first_gpus.empty()) first_gpus = gpus;
      if (gpus != first_gpus)
        continue;  // the replay refuses such a sample; the judge assumes it never sees one
      for (const auto& v : judge.Add(r.sample)) (void)gp::watch::VerdictJson(v).dump();
    } catch (const gp::Error&) {
    }
  }
  for (const auto& v : judge.Finish(INT64_MAX / 4)) (void)gp::watch::VerdictJson(v).dump();
  (void)gp::watch::SummaryJson(judge.GetSummary()).dump();
  JobsAddUp(judge.GetSummary());
  return 0;
}
