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
  // Mixed-precision AdamW: 16 bytes per parameter in the ZeRO paper's layout, 1.1 TB in all; DeepSpeed's
  // own estimator counts 18 under ZeRO-3 (its fp32 gradient copy in place of the 16-bit gradients).
  auto states = [](const size::Estimate& x) {
    return x.Find("weights")->bytes + x.Find("gradients")->bytes + x.Find("optimizer")->bytes;
  };
  CHECK(std::round(states(e) * 16 / 1e9) == 1242);
  const size::Estimate paper = size::EstimateTask(
      test::TaskFromArgs("--model llama-2-70b --method full --parallel zero3 --gpus 16 --grad-bytes 2"));
  CHECK(std::round(states(paper) * 16 / 1e9) == 1104);
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
  CHECK(fit->gpus == 20);  // 18 bytes of model states per parameter, as DeepSpeed's estimator counts
  CHECK(fit->at.per_gpu <= 80e9);
  t.gpus = fit->gpus - 1;
  CHECK(size::EstimateTask(t).per_gpu > 80e9);
  size::Task d = test::TaskFromArgs("--model llama-2-70b --parallel ddp");
  CHECK_FALSE(size::SmallestFit(d, 80000000000ULL));
}

namespace {

// One line of DeepSpeed's printed estimate ("  per CPU  |  per GPU |   Options", GiB to two decimals) for a
// task gpuprep sizes. The figures are what estimate_zero2_model_states_mem_needs_all_cold
// (deepspeed/runtime/zero/stage_1_and_2.py) and estimate_zero3_model_states_mem_needs_all_cold
// (deepspeed/runtime/zero/stage3.py) print at deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641,
// called with the parameter count and the largest layer gpuprep counts for the model (one transformer block)
// and the nodes and GPUs per node below. ZeRO-3 lines are the zero_init=1 ones (transformers builds the model
// under deepspeed.zero.Init when ZeRO-3 is configured).
struct DeepSpeedLine {
  const char* args;  // the task, without --offload
  int gpus_per_node;
  const char* call;  // the estimator call that printed the line
  const char* offload;
  double cpu_gib, gpu_gib;
};

#define GP_DS2(n)                                                                                 \
  "estimate_zero2_model_states_mem_needs_all_cold(total_params=6738415616, num_gpus_per_node=" #n \
  ", num_nodes=1)"
#define GP_DS3_7B                                                                                 \
  "estimate_zero3_model_states_mem_needs_all_cold(total_params=6738415616, largest_layer_params=" \
  "202383360, num_gpus_per_node=8, num_nodes=1)"
#define GP_DS3_70B                                                                                 \
  "estimate_zero3_model_states_mem_needs_all_cold(total_params=68976648192, largest_layer_params=" \
  "855654400, num_gpus_per_node=8, num_nodes=2)"
#define GP_DS3_13B                                                                                 \
  "estimate_zero3_model_states_mem_needs_all_cold(total_params=13015864320, largest_layer_params=" \
  "317204480, num_gpus_per_node=4, num_nodes=4)"

const DeepSpeedLine kDeepSpeed[] = {
    {"--model llama-2-7b --parallel zero2 --gpus 8", 8, GP_DS2(8), "optimizer", 301.23, 12.55},
    {"--model llama-2-7b --parallel zero2 --gpus 8", 8, GP_DS2(8), "none", 301.23, 26.67},
    {"--model llama-2-7b --parallel zero2 --gpus 4", 4, GP_DS2(4), "optimizer", 150.62, 12.55},
    {"--model llama-2-7b --parallel zero2 --gpus 4", 4, GP_DS2(4), "none", 150.62, 40.79},
    {"--model llama-2-7b --parallel zero2 --gpus 2", 2, GP_DS2(2), "optimizer", 150.62, 12.55},
    {"--model llama-2-7b --parallel zero2 --gpus 2", 2, GP_DS2(2), "none", 75.31, 69.03},
    {"--model llama-2-7b --parallel zero3 --gpus 8", 8, GP_DS3_7B, "params", 169.44, 0.75},
    {"--model llama-2-7b --parallel zero3 --gpus 8", 8, GP_DS3_7B, "optimizer", 150.62, 2.32},
    {"--model llama-2-7b --parallel zero3 --gpus 8", 8, GP_DS3_7B, "none", 9.05, 14.87},
    {"--model llama-2-70b --parallel zero3 --gpus 16", 8, GP_DS3_70B, "params", 867.23, 3.19},
    {"--model llama-2-70b --parallel zero3 --gpus 16", 8, GP_DS3_70B, "optimizer", 770.87, 11.22},
    {"--model llama-2-70b --parallel zero3 --gpus 16", 8, GP_DS3_70B, "none", 38.25, 75.46},
    {"--model llama-2-13b --parallel zero3 --gpus 16 --gpus-per-node 4", 4, GP_DS3_13B, "params", 81.82,
     1.18},
    {"--model llama-2-13b --parallel zero3 --gpus 16 --gpus-per-node 4", 4, GP_DS3_13B, "optimizer", 72.73,
     2.70},
    {"--model llama-2-13b --parallel zero3 --gpus 16 --gpus-per-node 4", 4, GP_DS3_13B, "none", 7.09, 14.82},
};

#undef GP_DS2
#undef GP_DS3_7B
#undef GP_DS3_70B
#undef GP_DS3_13B

}  // namespace

TEST_CASE("DeepSpeed's model-state estimators: GPU and host within rounding", "[size]") {
  constexpr double kGiB = 1073741824.0;
  for (const auto& d : kDeepSpeed) {
    const size::Task t = test::TaskFromArgs(std::string(d.args) + " --offload " + d.offload);
    const size::Estimate e = size::EstimateTask(t);
    double gpu = e.Find("weights")->bytes + e.Find("gradients")->bytes + e.Find("optimizer")->bytes;
    // ZeRO-3 gathers the largest layer's 16-bit weights and computes its 16-bit gradients: 4 bytes each, in
    // gpuprep's buffers, in DeepSpeed's GPU figure.
    if (t.strategy == size::Strategy::kZero3)
      gpu += 4 * static_cast<double>(size::CountParams(t.arch).LargestLayer());
    const double host = e.host_per_gpu * d.gpus_per_node;
    INFO(d.args << " --offload " << d.offload << " against " << d.call << ": GPU " << gpu / kGiB
                << " GiB (DeepSpeed " << d.gpu_gib << "), host per node " << host / kGiB << " GiB (DeepSpeed "
                << d.cpu_gib << ")");
    CHECK(std::abs(gpu / kGiB - d.gpu_gib) <= 0.0051);
    CHECK(std::abs(host / kGiB - d.cpu_gib) <= 0.0051);
  }
}
