// The cost of a run: GPU-hours paid split by verdict, the unjudged rest, MIG instances sharing a window,
// amounts only when every GPU has a price, the SM-inactive share as information.
#include "watch/cost.h"

#include <catch2/catch.hpp>

#include "watch/text.h"

using namespace gp;

namespace {

watch::Summary TwoGpus() {
  watch::Summary s;
  s.start_ms = 0;
  s.end_ms = 3600 * 1000;  // one hour
  s.window_ms = 600 * 1000;
  s.gpus = {{{0, "GPU-a", "0000:18:00.0"}, "NVIDIA H100 80GB HBM3", {}, 0},
            {{1, "GPU-b", "0000:29:00.0"}, "NVIDIA H100 80GB HBM3", {}, 0}};
  s.gpus[0].verdict_ms = {{"idle", 1800e3}, {"healthy", 1200e3}};  // 600 s unjudged
  s.gpus[1].verdict_ms = {{"input_bound", 2400e3}, {"throttled", 1200e3}};
  s.gpus[1].sm_active_sum = 0.6 + 0.2;
  s.gpus[1].sm_active_samples = 2;
  return s;
}

}  // namespace

TEST_CASE("cost: GPU-hours paid are wall time x GPUs, split by verdict, adding up", "[watch][cost]") {
  const watch::RunCost c = watch::CostOfRun(TwoGpus(), {2.0, 3.0}, "USD", 0.8);
  CHECK(c.gpu_hours == Approx(2.0));
  REQUIRE(c.amount);
  CHECK(*c.amount == Approx(5.0));  // 1 h at 2 + 1 h at 3
  CHECK(c.by_verdict.at("idle").gpu_hours == Approx(0.5));
  CHECK(c.by_verdict.at("idle").share == Approx(0.25));
  CHECK(*c.by_verdict.at("idle").amount == Approx(1.0));
  CHECK(c.by_verdict.at("unjudged").gpu_hours == Approx(1.0 / 6));
  CHECK(*c.underuse.amount == Approx(3.0));  // input_bound 40 min + throttled 20 min at 3
  CHECK(c.underuse.share == Approx(0.5));
  double share = 0, amount = 0;
  for (const auto& [name, line] : c.by_verdict) {
    share += line.share;
    amount += *line.amount;
  }
  CHECK(share == Approx(1.0));
  CHECK(amount == Approx(*c.amount));
  REQUIRE(c.sm_inactive_share);
  CHECK(*c.sm_inactive_share == Approx(0.6));
  CHECK(c.unpriced.empty());
}

TEST_CASE("cost: a GPU without a price leaves every amount unset and says which", "[watch][cost]") {
  const watch::RunCost c = watch::CostOfRun(TwoGpus(), {2.0, std::nullopt}, "USD", 0.8);
  CHECK_FALSE(c.amount);
  CHECK_FALSE(c.idle.amount);
  CHECK_FALSE(c.by_verdict.at("healthy").amount);
  CHECK(c.unpriced == std::vector<unsigned>{1});
  CHECK(c.gpu_hours == Approx(2.0));  // the time is still accounted
  watch::Summary s = TwoGpus();
  s.cost = c;
  const std::string t = watch::RenderSummaryText(s);
  CHECK(t.find("cost: 2.0000 GPU-hours paid (3600.0 s x 2 GPUs)\n") != std::string::npos);
  CHECK(t.find("no price for GPU 1") != std::string::npos);
  CHECK(t.find("SM inactive 60.0%") != std::string::npos);
}

TEST_CASE("cost: no GPM, no SM-inactive share; an empty run costs nothing", "[watch][cost]") {
  watch::Summary s = TwoGpus();
  s.gpus[1].sm_active_samples = 0;
  s.gpus[1].sm_active_sum = 0;
  CHECK_FALSE(watch::CostOfRun(s, {}, "", 0.8).sm_inactive_share);
  watch::Summary empty;
  const watch::RunCost c = watch::CostOfRun(empty, {}, "", 0.8);
  CHECK(c.gpu_hours == 0);
  CHECK_FALSE(c.amount);
  CHECK(c.by_verdict.at("unjudged").share == 0);
}
