// Per-job grouping through the judge: how a shared GPU's time is split, what each job's verdicts and
// cost are, and that the jobs add up to the run.
#include "watch/jobs.h"

#include <catch2/catch.hpp>

#include "synthetic.h"
#include "watch/judge.h"
#include "watch/run.h"

using namespace gp;

namespace {

watch::Job Slurm(const std::string& id) { return {"slurm", id, "/slurm/uid_1/job_" + id, ""}; }

const watch::JobSummary* Find(const watch::Summary& s, const std::string& key) {
  for (const auto& j : s.jobs)
    if ((j.job.kind == watch::kNoJob ? std::string(watch::kNoJob) : j.job.Key()) == key) return &j;
  return nullptr;
}

// Two GPUs, 4 windows of 5 samples: job 1 alone on GPU 0; GPU 1 shared by job 1 and job 2 in the first 3
// samples of each window, then job 2 alone; GPU 1 idle with memory held.
watch::Summary Run(int tail_samples) {
  watch::Judge judge({}, 5000);
  std::vector<watch::Sample> all;
  for (int w = 0; w < 4; ++w) {
    auto window = test::Window(2, 5, [&](watch::GpuSample& g, int i, unsigned gpu) {
      if (gpu == 0) {
        (*g.processes)[0].job = Slurm("1");
        return;
      }
      g.duty_pct = 0;
      g.gpm = watch::Gpm{0.0, 0.0, 0.0, 0.0};
      g.power_w = 80;
      std::vector<watch::GpuProcess> ps;
      if (i < 3) ps.push_back({1000, 1ull << 30, std::nullopt, Slurm("1")});
      ps.push_back({2000, 30ull << 30, std::nullopt, Slurm("2")});
      ps.push_back({2001, 1ull << 30, std::nullopt, Slurm("2")});  // one job twice: counted once
      g.processes = ps;
    });
    for (auto& s : window) s.time_ms += w * 5000LL;
    all.insert(all.end(), window.begin(), window.end());
  }
  for (int i = 0; i < tail_samples; ++i) {
    watch::Sample extra = all[static_cast<size_t>(i)];
    extra.time_ms = all.back().time_ms + 1000LL * (i + 1);
    all.push_back(extra);
  }
  for (const auto& s : all) judge.Add(s);
  judge.Finish(all.back().time_ms + 1000);
  watch::WatchOptions o;
  o.price_of = [](const std::string&) { return std::optional<double>(3.0); };
  o.currency = "USD";
  return watch::Priced(judge.GetSummary(), o);
}

}  // namespace

TEST_CASE("jobs: a shared GPU's time split equally between its jobs, per sample", "[watch][jobs]") {
  const watch::Summary s = Run(0);
  REQUIRE(s.jobs.size() == 2);  // no "none": every GPU always had a process
  const auto* one = Find(s, "slurm:1");
  const auto* two = Find(s, "slurm:2");
  REQUIRE(one);
  REQUIRE(two);
  CHECK(one->gpus == std::vector<unsigned>{0, 1});
  CHECK(two->gpus == std::vector<unsigned>{1});
  CHECK(one->verdict == std::string("healthy"));
  CHECK(two->verdict == std::string("idle_memory_held"));
  // GPU 1, per window: 3 samples shared (1.5 each), 2 samples job 2 alone: job 1 0.3, job 2 0.7.
  CHECK(one->verdict_ms.at(1).at("idle_memory_held") == Approx(4 * 5000 * 0.3));
  CHECK(two->verdict_ms.at(1).at("idle_memory_held") == Approx(4 * 5000 * 0.7));
  CHECK(one->windows.at("healthy") == 4);
  CHECK(one->windows.at("idle_memory_held") == 4);
  CHECK(two->windows.count("healthy") == 0);
  REQUIRE(s.cost);
  REQUIRE(one->cost);
  REQUIRE(two->cost);
  CHECK(one->cost->gpu_hours + two->cost->gpu_hours == Approx(s.cost->gpu_hours));
  CHECK(*one->cost->amount + *two->cost->amount == Approx(*s.cost->amount));
  for (const auto& [name, line] : s.cost->by_verdict)
    CHECK(one->cost->by_verdict.at(name).gpu_hours + two->cost->by_verdict.at(name).gpu_hours ==
          Approx(line.gpu_hours).margin(1e-12));
  CHECK(two->cost->idle.share == Approx(1.0));
  CHECK(one->cost->gpus == 2);
}

TEST_CASE("jobs: unjudged time goes by the run-long shares; verdicts name their jobs", "[watch][jobs]") {
  const watch::Summary s = Run(3);  // 3 samples after the last window: unjudged
  const auto* one = Find(s, "slurm:1");
  const auto* two = Find(s, "slurm:2");
  REQUIRE(one);
  REQUIRE(two);
  CHECK(s.cost->by_verdict.at("unjudged").gpu_hours > 0);
  CHECK(one->cost->by_verdict.at("unjudged").gpu_hours + two->cost->by_verdict.at("unjudged").gpu_hours ==
        Approx(s.cost->by_verdict.at("unjudged").gpu_hours));
  CHECK(one->run_share.at(0) == Approx(1.0));
  CHECK(one->run_share.at(1) + two->run_share.at(1) == Approx(1.0));
}

TEST_CASE("jobs: no process is 'none'; a process without a job is 'unknown'; gaps count for nobody",
          "[watch][jobs]") {
  watch::Judge judge({}, 4000);
  std::vector<watch::Verdict> verdicts;
  auto window = test::Window(2, 4, [](watch::GpuSample& g, int i, unsigned gpu) {
    if (gpu == 1) {
      g.processes = std::vector<watch::GpuProcess>{};  // nothing on GPU 1
      g.duty_pct = 0;
      g.gpm = watch::Gpm{0.0, 0.0, 0.0, 0.0};
      g.memory_used_bytes = 0;
    }
    if (gpu == 0 && i == 3) {
      g.state = watch::GpuState::kGap;
      g.processes.reset();
    }
  });
  for (const auto& s : window) judge.Add(s);
  watch::Sample after = window.back();
  after.time_ms += 1000;
  verdicts = judge.Add(after);
  judge.Finish(after.time_ms + 1000);
  const watch::Summary& s = judge.GetSummary();
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].job.Key() == "unknown");
  CHECK(s.jobs[0].job.reason == "not in the recording (made before per-job grouping)");
  CHECK(s.jobs[1].job.kind == "none");
  CHECK(s.jobs[1].gpus == std::vector<unsigned>{1});
  CHECK(s.jobs[1].verdict == std::string("idle"));
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[0].jobs == std::vector<std::string>{"unknown"});
  CHECK(verdicts[1].jobs.empty());
  // GPU 0's gap sample is nobody's: the unknown job holds all of GPU 0's read samples.
  CHECK(s.jobs[0].run_share.at(0) == Approx(1.0));
}

TEST_CASE("jobs: past 1,000 distinct jobs the rest are one 'other', said in the summary; built once",
          "[watch][jobs]") {
  const int kept = 1000, extra = 5;  // gpuprep keeps the first 1,000 distinct jobs apart
  const int n = kept + extra;
  watch::Judge judge({}, 1000LL * n);
  auto window = test::Window(1, n, [](watch::GpuSample& g, int i, unsigned) {
    (*g.processes)[0].job = Slurm(std::to_string(i + 1));
  });
  for (const auto& s : window) judge.Add(s);
  watch::Sample after = window.back();
  after.time_ms += 1000;
  judge.Add(after);                        // closes the one window
  CHECK(judge.GetSummary().jobs.empty());  // the job summary is made once, at the end
  judge.Finish(after.time_ms + 1000);
  const watch::Summary& s = judge.GetSummary();
  REQUIRE(s.jobs.size() == static_cast<size_t>(kept) + 1);
  CHECK(s.jobs[0].job.Key() == "slurm:1");
  CHECK(s.jobs[kept - 1].job.Key() == "slurm:1000");
  const watch::JobSummary& other = s.jobs.back();
  CHECK(other.job.kind == "other");
  CHECK(other.gpus == std::vector<unsigned>{0});
  CHECK(other.windows.at("healthy") == 1);
  // 5 of the window's 1,005 samples; and 6 of the run's 1,006 (the last one is job 1005's again).
  CHECK(other.verdict_ms.at(0).at("healthy") == Approx(1000.0 * extra));
  CHECK(other.run_share.at(0) == Approx(6.0 / (n + 1)));
  bool said = false;
  for (const auto& note : s.notes) said = said || note.find("5 more jobs") != std::string::npos;
  CHECK(said);
  CHECK(watch::RenderJobsText(s.jobs).find("5 other jobs") != std::string::npos);
}
