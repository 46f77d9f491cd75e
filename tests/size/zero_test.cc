// The ZeRO paper's worked example (Rajbhandari et al., arXiv:1910.02054, Figure 1): a 7.5B-parameter model
// on 64 GPUs with mixed-precision Adam (2-byte gradients, K = 12) needs 120 / 31.4 / 16.6 / 1.9 GB of model
// states per GPU for baseline data parallelism and ZeRO stages 1, 2 and 3, in decimal GB to one decimal.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "size/estimate.h"
#include "size/task_args.h"

using namespace gp;

namespace {

// Weights + gradients + optimizer states, in decimal GB rounded to one decimal as the paper prints them.
std::string ModelStates(const std::string& parallel) {
  const size::Task t = test::TaskFromArgs(
      "--params 7.5e9 --precision bf16-mixed --grad-bytes 2 --gpus 64 --parallel " + parallel);
  const size::Estimate e = size::EstimateTask(t);
  const double bytes = e.Find("weights")->bytes + e.Find("gradients")->bytes + e.Find("optimizer")->bytes;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / 1e9);
  return buf;
}

}  // namespace

TEST_CASE("ZeRO paper: 7.5B parameters on 64 GPUs", "[size]") {
  CHECK(ModelStates("ddp") == "120.0");
  CHECK(ModelStates("zero1") == "31.4");
  CHECK(ModelStates("zero2") == "16.6");
  CHECK(ModelStates("zero3") == "1.9");
}

TEST_CASE("the model states of the popular 70B claims", "[size]") {
  // "140 GB for 70B" is the bf16 weights alone.
  const size::Task w = test::TaskFromArgs("--model llama-2-70b --method full --parallel zero3 --gpus 16");
  const size::Estimate e = size::EstimateTask(w);
  CHECK(std::round(e.Find("weights")->bytes * 16 / 1e9) == 138);
  // Mixed-precision AdamW: 16 bytes per parameter, 1.1 TB in all.
  const double states = e.Find("weights")->bytes + e.Find("gradients")->bytes + e.Find("optimizer")->bytes;
  CHECK(std::round(states * 16 / 1e9) == 1104);
  // "40 GB with LoRA" holds for 4-bit QLoRA; 16-bit LoRA keeps 138 GB of frozen weights.
  const size::Estimate q = size::EstimateTask(test::TaskFromArgs("--model llama-2-70b --method qlora"));
  CHECK(q.Find("weights")->bytes / 1e9 == Approx(37.2).margin(0.2));
  const size::Estimate l = size::EstimateTask(test::TaskFromArgs("--model llama-2-70b --method lora"));
  CHECK(l.Find("weights")->bytes / 1e9 == Approx(138.8).margin(0.2));
}

TEST_CASE("more GPUs shard ZeRO-3 states; DDP never fits a 70B", "[size]") {
  size::Task t = test::TaskFromArgs("--model llama-2-70b --parallel zero3 --grad-checkpointing full");
  const auto fit = size::SmallestFit(t, 80000000000ULL);
  REQUIRE(fit);
  CHECK(fit->gpus == 18);
  CHECK(fit->at.per_gpu <= 80e9);
  t.gpus = fit->gpus - 1;
  CHECK(size::EstimateTask(t).per_gpu > 80e9);
  size::Task d = test::TaskFromArgs("--model llama-2-70b --parallel ddp");
  CHECK_FALSE(size::SmallestFit(d, 80000000000ULL));
}
