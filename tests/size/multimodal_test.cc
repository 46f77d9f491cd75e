// Multimodal models (size/multimodal.h): the towers against their publisher's counts, the LLaVA-1.5 and
// CLIP presets, the plausibility check against the hardware LLaVA-1.5 was trained on, and hostile inputs.
// Every tolerance below was written before the first comparison.
#include "size/multimodal.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "size/estimate.h"
#include "size/model.h"
#include "size/task_args.h"
#include "support/cli.h"
#include "util/strings.h"

using gp::size::EstimateTask;
using gp::size::FindTower;
using gp::test::Gpuprep;
using gp::test::TaskFromArgs;
using nlohmann::json;

namespace {
const gp::size::PartEstimate* Part(const gp::size::Estimate& e, const std::string& role) {
  for (const auto& p : e.parts)
    if (p.role == role) return &p;
  return nullptr;
}
}  // namespace

// mlfoundations/open_clip docs/model_profile.csv@f862f86cd92123615a8695ce8bcb6ecc066af452 gives the towers
// in millions to two decimals: the count must round to the same figure (tolerance 0.005M).
TEST_CASE("multimodal: CLIP towers match open_clip's model profile", "[size][multimodal]") {
  const auto near = [](uint64_t n, double millions) { return std::fabs(n / 1e6 - millions) <= 0.005; };
  const auto* vit = FindTower("clip-vit-l-14");
  const auto* text = FindTower("clip-text-l-14");
  REQUIRE(vit);
  REQUIRE(text);
  CHECK(near(TowerParams(*vit), 303.97));   // ViT-L-14 image_mparams
  CHECK(near(TowerParams(*text), 123.65));  // ViT-L-14 text_mparams
  // ViT-L-14 mparams 427.62: the two towers and the logit scale.
  CHECK(near(TowerParams(*vit) + TowerParams(*text) + 1, 427.62));
  // ViT-L-14-336 image_mparams 304.29 counts the projection (1024 x 768) that LLaVA's CLIPVisionModel lacks.
  gp::size::Tower with_proj = *FindTower("clip-vit-l-14-336");
  CHECK(with_proj.proj == 0);
  CHECK(with_proj.Tokens() == 577);
  with_proj.proj = 768;
  CHECK(near(TowerParams(with_proj), 304.29));
}

// haotian-liu/LLaVA@c121f043 llava/model/multimodal_projector/builder.py: mlp2x_gelu is Linear(mm_hidden,
// hidden), GELU, Linear(hidden, hidden), both with bias: exact.
TEST_CASE("multimodal: the projector as LLaVA builds it", "[size][multimodal]") {
  CHECK(gp::size::ProjectorParams("mlp2x-gelu", 1024, 4096) == 1024ull * 4096 + 4096 + 4096ull * 4096 + 4096);
  CHECK(gp::size::ProjectorParams("linear", 1024, 5120) == 1024ull * 5120 + 5120);
  CHECK(gp::size::ProjectorParams("mlp9x-gelu", 1024, 5120) == 0);
  CHECK_FALSE(gp::size::KnownProjector("mlp0x-gelu"));
  CHECK_FALSE(gp::size::KnownProjector("mlp2x_gelu"));
}

TEST_CASE("multimodal: every preset's parts exist", "[size][multimodal]") {
  for (const std::string& name : gp::size::PresetNames()) {
    INFO(name);
    const auto* p = gp::size::FindPreset(name);
    REQUIRE(p);
    CHECK(FindTower(p->vision));
    CHECK((*p->model ? gp::size::FindModel(p->model) != nullptr : FindTower(p->text) != nullptr));
    CHECK_NOTHROW(EstimateTask(TaskFromArgs("--multimodal " + name)));
  }
}

// LLaVA-1.5, haotian-liu/LLaVA@c121f0432da27facab705978f83c4ada465e46fd: stage 1 trains the projector only
// (pretrain.sh --tune_mm_mlp_adapter), stage 2 the projector and the language model (finetune.sh); the
// vision tower stays frozen in both (clip_encoder.py). Parts: Vicuna-1.5 with Llama 2 shapes, CLIP
// ViT-L/14-336 without its projection (303,507,456), mlp2x_gelu.
TEST_CASE("multimodal: LLaVA-1.5 presets, parts and what trains", "[size][multimodal]") {
  const auto s1 = EstimateTask(TaskFromArgs("--multimodal llava-1.5-7b-stage1"));
  REQUIRE(s1.parts.size() == 3);
  CHECK(Part(s1, "vision")->params == 303507456);
  CHECK(Part(s1, "vision")->train == "frozen");
  CHECK(Part(s1, "vision")->activations == 0);  // run under torch.no_grad
  CHECK(Part(s1, "projector")->params == 20979712);
  CHECK(Part(s1, "projector")->train == "full");
  CHECK(Part(s1, "language")->params == 6738415616);
  CHECK(Part(s1, "language")->train == "frozen");
  CHECK(s1.trainable == 20979712);
  CHECK(s1.params == 6738415616 + 303507456 + 20979712);
  const auto s2 = EstimateTask(TaskFromArgs("--multimodal llava-1.5-13b-stage2"));
  CHECK(Part(s2, "language")->params == 13015864320);
  CHECK(Part(s2, "language")->train == "full");
  CHECK(Part(s2, "projector")->params == 1024ull * 5120 + 5120 + 5120ull * 5120 + 5120);
  CHECK(s2.trainable == 13015864320 + Part(s2, "projector")->params);
  // The image tokens are in the language model's sequence: 1472 text + 576 image = model_max_length 2048.
  const auto t2 = TaskFromArgs("--multimodal llava-1.5-13b-stage2");
  CHECK(t2.seq + t2.multimodal.image_tokens == 2048);
  CHECK(t2.strategy == gp::size::Strategy::kZero3);
  CHECK(t2.micro_batch == 16);
  CHECK(t2.gpus == 8);
  // More text tokens mean more activations in the language model.
  const auto longer = EstimateTask(TaskFromArgs("--multimodal llava-1.5-13b-stage2 --seq 4000"));
  CHECK(Part(longer, "language")->activations > Part(s2, "language")->activations);
}

// The plausibility check: LLaVA-1.5 publishes hardware, not memory. README.md@c121f043: "LLaVA is trained on
// 8 A100 GPUs with 80GB memory"; finetune.sh: ZeRO-3, 16 per GPU, 2048 tokens, gradient checkpointing,
// bf16. Expectation, written first: the 13B stage-2 figure fits 80e9 bytes (below the 85.9e9 an A100 80GB
// holds, leaving the margin the estimate's headroom does not claim) and is above the sharded model states
// alone (13.05B x 18 B / 8 = 29.4 GB), so the check can fail both ways; the 7B stage 2 fits too.
TEST_CASE("multimodal: LLaVA-1.5 stage 2 fits the 8x A100 80GB it was trained on", "[size][multimodal]") {
  const auto e13 = EstimateTask(TaskFromArgs("--multimodal llava-1.5-13b-stage2"));
  INFO(e13.per_gpu);
  CHECK(e13.per_gpu <= 80e9);
  CHECK(e13.per_gpu > 13.05e9 * 18 / 8);
  const auto e7 = EstimateTask(TaskFromArgs("--multimodal llava-1.5-7b-stage2"));
  INFO(e7.per_gpu);
  CHECK(e7.per_gpu <= 80e9);
  // Stage 1 is not checked against the hardware: the presets size every sample at the 2048-token cap
  // (model_max_length), which the pretraining captions (576 image tokens and a short caption) do not reach;
  // at the cap the 7B needs 80.9 GB and the 13B 108.5 GB per GPU, above what the runs used. The first
  // version of this test expected the stage-1 presets to fit too; they do not at the cap.
  const auto s13 = EstimateTask(TaskFromArgs("--multimodal llava-1.5-13b-stage1"));
  CHECK(s13.per_gpu > e13.per_gpu);  // the frozen 13B unsharded under ZeRO-2, 32 samples per GPU
  // Without gradient checkpointing the same batch does not fit: the check is not one that always passes.
  const auto eager =
      EstimateTask(TaskFromArgs("--multimodal llava-1.5-13b-stage2 --grad-checkpointing none"));
  CHECK(eager.per_gpu > 80e9);
}

// CLIP (Radford et al., arXiv:2103.00020): both towers trained, no language model, no projector.
TEST_CASE("multimodal: CLIP ViT-L/14 contrastive, both towers trained", "[size][multimodal]") {
  const auto e = EstimateTask(TaskFromArgs("--multimodal clip-vit-l-14 --gpus 8 --micro-batch 128"));
  REQUIRE(e.parts.size() == 2);
  CHECK(Part(e, "vision")->train == "full");
  CHECK(Part(e, "text")->train == "full");
  CHECK(e.params == 303966208 + 123650304);
  CHECK(e.trainable == e.params);
  CHECK(Part(e, "vision")->activations > Part(e, "text")->activations);
  // A frozen image tower (LiT-style): no gradients or optimizer states for it, no activations.
  const auto lit =
      EstimateTask(TaskFromArgs("--multimodal clip-vit-l-14 --gpus 8 --micro-batch 128 --train text"));
  CHECK(Part(lit, "vision")->activations == 0);
  CHECK(lit.per_gpu < e.per_gpu);
}

TEST_CASE("multimodal: text and JSON show the parts", "[size][multimodal][cli]") {
  auto r = Gpuprep({"size", "--multimodal", "llava-1.5-7b-stage2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("PARTS") != std::string::npos);
  CHECK(r.out.find("vision    CLIP ViT-L/14-336: 303.51M parameters, frozen") != std::string::npos);
  CHECK(r.out.find("+ 576 image tokens") != std::string::npos);
  auto j = Gpuprep({"size", "--json", "--multimodal", "llava-1.5-7b-stage2"});
  REQUIRE(j.code == 0);
  const json m = json::parse(j.out)["task"]["multimodal"];
  CHECK(m["preset"] == "llava-1.5-7b-stage2");
  CHECK(m["image_tokens"] == 576);
  REQUIRE(m["parts"].size() == 3);
  CHECK(m["parts"][0]["role"] == "language");
  CHECK(m["parts"][0]["train"] == "full");
  CHECK(m["parts"][1]["role"] == "vision");
  CHECK(m["parts"][1]["states_bytes"].get<int64_t>() > 0);
  auto plain = Gpuprep({"size", "--json", "--model", "llama-2-7b"});
  CHECK(!json::parse(plain.out)["task"].contains("multimodal"));
}

TEST_CASE("multimodal: hostile parts, one line and exit 2", "[size][multimodal][cli]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // a part naming a model of parts (the preset itself)
      {{"--multimodal", "llava-1.5-7b-stage2", "--vision-encoder", "llava-1.5-7b-stage2"},
       "--vision-encoder"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--vision-encoder", "clip-vit-h-14"}, "--vision-encoder"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--train", "projector,decoder"}, "--train"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--train", "text"}, "--train"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--train", "projector=lora"}, "--train"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--train", "language=qlora"}, "--train"},
      {{"--multimodal", "llava-9"}, "--multimodal"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--image-tokens", "0"}, "--image-tokens"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--image-tokens", "-576"}, "--image-tokens"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--image-tokens", "1e30"}, "--image-tokens"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--projector", "mlp99x-gelu"}, "--projector"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--method", "lora"}, "--method"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--tp", "2", "--gpus", "8"}, "--tp"},
      {{"--multimodal", "clip-vit-l-14", "--model", "llama-2-7b"}, "--model"},
      {{"--multimodal", "clip-vit-l-14", "--image-tokens", "576"}, "--image-tokens"},
      {{"--vision-encoder", "clip-vit-l-14-336", "--model", "llama-2-7b", "--projector", "none"},
       "--projector"},
      {{"--vision-encoder", "clip-vit-l-14-336"}, "--vision-encoder"},
      {{"--model", "llama-2-7b", "--image-tokens", "576"}, "--image-tokens"},
      {{"--vision-encoder", "clip-text-l-14", "--model", "llama-2-7b"}, "--vision-encoder"},
      {{"--multimodal", "llava-1.5-7b-stage2", "--seq", "1048576"}, "--seq"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"size"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = Gpuprep(args);
    INFO(gp::Join(args, " ") << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
}

TEST_CASE("multimodal: a Task document lists the parts, errors at their line:col",
          "[size][multimodal][cli]") {
  gp::test::TempRoot root;
  root.Write("/task.yaml",
             "apiVersion: gpuprep/v1\n"
             "kind: Task\n"
             "metadata: {name: llava}\n"
             "model: llama-2-13b\n"
             "multimodal:\n"
             "  vision: clip-vit-l-14-336\n"
             "  projector: mlp2x-gelu\n"
             "  image_tokens: 576\n"
             "  train: [projector, language]\n"
             "parallel: {strategy: zero3, gpus: 8}\n"
             "batch: {seq: 1472, micro_batch: 16}\n"
             "grad_checkpointing: full\n");
  auto r = Gpuprep({"size", "--task", root.path() + "/task.yaml", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  auto p = Gpuprep({"size", "--multimodal", "llava-1.5-13b-stage2", "--json"});
  REQUIRE(p.code == 0);
  // The document spells out the preset: the same per-GPU figure.
  CHECK(j["per_gpu"]["total_bytes"] == json::parse(p.out)["per_gpu"]["total_bytes"]);
  root.Write("/self.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: llava}\nmodel: llama-2-7b\n"
             "multimodal:\n  vision: llava-1.5-7b-stage2\n");
  auto s = Gpuprep({"size", "--task", root.path() + "/self.yaml"});
  CHECK(s.code == 2);
  CHECK(s.err.find("self.yaml:6:11: ") != std::string::npos);
  CHECK(std::count(s.err.begin(), s.err.end(), '\n') == 1);
  root.Write("/part.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: llava}\n"
             "multimodal:\n  preset: llava-1.5-7b-stage1\n  train: [projector, decoder]\n");
  auto u = Gpuprep({"size", "--task", root.path() + "/part.yaml"});
  CHECK(u.code == 2);
  CHECK(u.err.find("part.yaml:6:") != std::string::npos);
  CHECK(std::count(u.err.begin(), u.err.end(), '\n') == 1);
}
