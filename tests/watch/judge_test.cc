// Windows over a stream: closed by a later sample or by the end of the run, a short run not judged,
// lost GPUs in the summary, durations on the command line.
#include "watch/judge.h"

#include <catch2/catch.hpp>

#include "watch/duration.h"
#include "watch/jsonl.h"
#include "watch/synthetic.h"
#include "watch/text.h"

using namespace gp;

TEST_CASE("judge: windows close on time; the tail of a run is not judged", "[watch][judge]") {
  watch::Judge j({}, 5000);
  auto samples = test::Window(2, 12, nullptr);  // 12 samples 1 s apart: windows [0,5) [5,10), tail [10,12)
  size_t verdicts = 0;
  for (const auto& s : samples) verdicts += j.Add(s).size();
  CHECK(verdicts == 4);  // two windows x two GPUs
  CHECK(j.Finish(samples.back().time_ms + 1000).empty());
  const auto& sum = j.GetSummary();
  CHECK(sum.judged);
  CHECK(sum.windows == 2);
  CHECK(sum.samples == 12);
  CHECK(sum.gpus[0].windows.at("healthy") == 2);
}

TEST_CASE("judge: the summary counts unclassified windows by the rule that came closest", "[watch][judge]") {
  watch::Judge j({}, 5000);
  auto samples =
      test::Window(1, 12, [](watch::GpuSample& g, int, unsigned) { g.gpm->sm_active_ratio = 0.6; });
  for (const auto& s : samples) j.Add(s);
  j.Finish(samples.back().time_ms + 1000);
  const auto& sum = j.GetSummary();
  CHECK(sum.gpus[0].windows.at("unclassified") == 2);
  auto json = watch::SummaryJson(sum);
  CHECK(json["gpus"][0]["unclassified_closest"]["healthy: sm_active_ratio"] == 2);
  CHECK(watch::RenderSummaryText(sum).find(
            "unclassified, closest rule healthy (failed: sm_active_ratio): 2") != std::string::npos);
}

TEST_CASE("judge: a run shorter than one window says so", "[watch][judge]") {
  watch::Judge j({}, 60000);
  auto samples = test::Window(1, 5, nullptr);
  for (const auto& s : samples) CHECK(j.Add(s).empty());
  CHECK(j.Finish(samples.back().time_ms + 1000).empty());
  CHECK_FALSE(j.GetSummary().judged);
  CHECK(j.GetSummary().reason == std::string("the run (5s) is shorter than one window (1m)"));
}

TEST_CASE("judge: a lost GPU is listed once with its first lost sample", "[watch][judge]") {
  watch::Judge j({}, 3000);
  auto samples = test::Window(2, 6, [](watch::GpuSample& g, int i, unsigned u) {
    if (u == 1 && i >= 2) g.state = watch::GpuState::kLost;
  });
  for (const auto& s : samples) j.Add(s);
  j.Finish(samples.back().time_ms + 1000);
  REQUIRE(j.GetSummary().lost_gpus.size() == 1);
  CHECK(j.GetSummary().lost_gpus[0].gpu.index == 1);
  CHECK(j.GetSummary().lost_gpus[0].time_ms == samples[2].time_ms);
  CHECK(j.GetSummary().gpus[1].windows.empty());  // no verdict, not even "unclassified"
}

TEST_CASE("durations: ms, s, m, h; bare seconds", "[watch][judge]") {
  CHECK(watch::ParseDuration("10m") == 600000);
  CHECK(watch::ParseDuration("1s") == 1000);
  CHECK(watch::ParseDuration("250ms") == 250);
  CHECK(watch::ParseDuration("1.5") == 1500);
  CHECK(watch::ParseDuration("2h") == 7200000);
  CHECK_FALSE(watch::ParseDuration("-1s"));
  CHECK_FALSE(watch::ParseDuration("1d"));
  CHECK_FALSE(watch::ParseDuration("0"));
  CHECK_FALSE(watch::ParseDuration("1..2s"));
  CHECK_FALSE(watch::ParseDuration(""));
  CHECK_FALSE(watch::ParseDuration("31d"));
  CHECK(watch::FormatDuration(90000) == "90s");
  CHECK(watch::FormatDuration(2200) == "2.2s");
  CHECK(watch::FormatDuration(3600000) == "1h");
}
