// Multimodal models (multimodal.h): the towers and presets, and the estimate that adds each part to one
// GPU's terms.
#include "size/multimodal.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "size/activations.h"
#include "size/format.h"
#include "size/states.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {
namespace {

// The towers: openai/CLIP clip/model.py (VisionTransformer: class token, patch convolution without bias,
// positions, ln_pre, residual blocks of attention with biased q/k/v/out and a 4x MLP, ln_post, proj;
// text Transformer: token and position embeddings, the same blocks, ln_final, text_projection), with the
// counts of mlfoundations/open_clip docs/model_profile.csv@f862f86c (image_mparams, text_mparams).
constexpr const char* kClipProfile =
    "openai/CLIP clip/model.py (VisionTransformer, Transformer); mlfoundations/open_clip "
    "docs/model_profile.csv@f862f86cd92123615a8695ce8bcb6ecc066af452 (ViT-L-14: image 303.97M, text 123.65M; "
    "ViT-L-14-336: image 304.29M)";
constexpr const char* kHfClip336 =
    "https://huggingface.co/openai/clip-vit-large-patch14-336 config.json (24 layers, hidden 1024, 16 heads, "
    "intermediate 4096, patch 14, image 336); LLaVA loads CLIPVisionModel, the tower without its projection "
    "(haotian-liu/LLaVA@c121f0432da27facab705978f83c4ada465e46fd llava/model/multimodal_encoder/"
    "clip_encoder.py)";
constexpr const char* kLlava =
    "haotian-liu/LLaVA@c121f0432da27facab705978f83c4ada465e46fd scripts/v1_5/pretrain.sh (stage 1: "
    "--tune_mm_mlp_adapter, zero2.json, per-device batch 32), scripts/v1_5/finetune.sh (stage 2: zero3.json, "
    "per-device batch 16), both --vision_tower openai/clip-vit-large-patch14-336 --mm_projector_type "
    "mlp2x_gelu --bf16 --model_max_length 2048 --gradient_checkpointing True; README.md (8x A100 80GB)";
constexpr const char* kClipPaper =
    "Radford et al., Learning Transferable Visual Models From Natural Language Supervision, "
    "arXiv:2103.00020, section 2.5 (both encoders trained from scratch with a contrastive loss)";
constexpr const char* kFrozen =
    "haotian-liu/LLaVA@c121f0432da27facab705978f83c4ada465e46fd llava/model/multimodal_encoder/"
    "clip_encoder.py (CLIPVisionTower.forward under torch.no_grad: a frozen tower keeps no activations)";
constexpr const char* kClipLoss =
    "mlfoundations/open_clip src/open_clip/loss.py ClipLoss (local_loss: each GPU's images and texts "
    "against the features gathered from all GPUs, fp32 logits)";

const Tower kTowers[] = {
    {"clip-vit-l-14", "CLIP ViT-L/14", true, 24, 1024, 16, 4096, 14, 224, 0, 0, 768, 303970000, kClipProfile},
    {"clip-vit-l-14-336", "CLIP ViT-L/14-336", true, 24, 1024, 16, 4096, 14, 336, 0, 0, 0, 0, kHfClip336},
    {"clip-text-l-14", "CLIP ViT-L/14 text", false, 12, 768, 12, 3072, 0, 0, 77, 49408, 768, 123650000,
     kClipProfile},
};

const Preset kPresets[] = {
    {"llava-1.5-7b-stage1", "LLaVA-1.5 7B, stage 1 (projector)", "llama-2-7b", "clip-vit-l-14-336", "",
     "mlp2x-gelu", 576, "projector", kLlava},
    {"llava-1.5-7b-stage2", "LLaVA-1.5 7B, stage 2 (projector and language model)", "llama-2-7b",
     "clip-vit-l-14-336", "", "mlp2x-gelu", 576, "projector,language", kLlava},
    {"llava-1.5-13b-stage1", "LLaVA-1.5 13B, stage 1 (projector)", "llama-2-13b", "clip-vit-l-14-336", "",
     "mlp2x-gelu", 576, "projector", kLlava},
    {"llava-1.5-13b-stage2", "LLaVA-1.5 13B, stage 2 (projector and language model)", "llama-2-13b",
     "clip-vit-l-14-336", "", "mlp2x-gelu", 576, "projector,language", kLlava},
    {"clip-vit-l-14", "CLIP ViT-L/14, contrastive", "", "clip-vit-l-14", "clip-text-l-14", "", 0,
     "vision,text", kClipPaper},
};

uint64_t BlockParams(uint64_t w, uint64_t mlp) {
  return 4 * (w * w + w) + (w * mlp + mlp) + (mlp * w + w) + 4 * w;  // attention, MLP, two LayerNorms
}

// The tower as the activation inventory sees it: a pre-norm encoder layer (LayerNorm, biased linears,
// GELU MLP), no dropout.
Architecture TowerArch(const Tower& tw) {
  Architecture a;
  a.name = tw.name;
  a.display = tw.display;
  a.family = Family::kEncoder;
  a.layers = tw.layers;
  a.hidden = tw.width;
  a.heads = a.kv_heads = tw.heads;
  a.ffn = tw.mlp;
  a.vocab = std::max(tw.vocab, 1);
  a.gated_mlp = false;
  return a;
}

const char* TrainName(std::optional<Method> m) {
  return !m ? "frozen" : *m == Method::kFull ? "full" : "lora";
}

std::optional<Method> TrainedAs(const Task& t, const std::string& part) {
  const auto it = t.multimodal.trained.find(part);
  if (it == t.multimodal.trained.end()) return std::nullopt;
  return it->second;
}

// A part's task: frozen is LoRA without adapters (16-bit weights, nothing trained).
Task PartTask(const Task& t, std::optional<Method> m) {
  Task p = t;
  p.method = m ? *m : Method::kLora;
  if (!m) p.lora_targets.clear();
  return p;
}

struct PartFig {
  PartEstimate p;
  States s;
  Local l;
  std::string formula;  // its activations
};

PartFig States_(const Task& t, const std::string& role, const std::string& display, std::optional<Method> m,
                Local l, double adapters, int shard) {
  PartFig f;
  l.trainable = !m ? 0 : *m == Method::kFull ? l.params : adapters;
  f.l = l;
  f.s = ModelStates(PartTask(t, m), l, shard);
  f.p.role = role;
  f.p.model = display;
  f.p.params = static_cast<uint64_t>(l.params);
  f.p.trainable = static_cast<uint64_t>(l.trainable);
  f.p.train = TrainName(m);
  f.p.states = f.s.weights.bytes + f.s.gradients.bytes + f.s.optimizer.bytes;
  return f;
}

PartFig TowerPart(const Task& t, const std::string& role, const Tower& tw, int shard) {
  const std::optional<Method> m = TrainedAs(t, role);
  const uint64_t w = tw.width, block = BlockParams(w, tw.mlp);
  Local l;
  l.params = static_cast<double>(TowerParams(tw));
  l.linear = static_cast<double>(tw.layers) * (4 * w * w + 2 * w * tw.mlp);
  l.largest_layer = static_cast<double>(block);
  l.largest_linear = static_cast<double>(w * tw.mlp);
  l.layer_linear = static_cast<double>(4 * w * w + 2 * w * tw.mlp);
  l.root = l.params - static_cast<double>(block) * tw.layers;
  l.layers = tw.layers;
  // LoRA on every linear of a block: q, k, v, out (w x w) and the two MLP matrices.
  const double adapters = static_cast<double>(tw.layers) * t.lora_rank * (8.0 * w + 2.0 * (w + tw.mlp));
  PartFig f = States_(t, role, tw.display, m, l, adapters, shard);
  if (!m) {
    f.formula = std::string(tw.display) + ": frozen, run without gradients (no activations kept)";
    return f;
  }
  Task at = PartTask(t, m);
  at.arch = TowerArch(tw);
  at.seq = tw.Tokens();
  at.dropout = 0;
  const double tokens = static_cast<double>(tw.Tokens()) * t.micro_batch;
  const double per = LayerBytesPerToken(at, LayerRole::kEncoder);
  const double e = t.precision == Precision::kFp32 ? 4 : 2;
  char buf[256];
  if (t.checkpointing == Checkpointing::kFull) {
    f.p.activations = (tw.layers * e * tw.width + per) * tokens;
    std::snprintf(buf, sizeof buf, "%s: %d layers x %.0f tokens x %.0f B (each layer's input) + one layer %s",
                  tw.display, tw.layers, tokens, e * tw.width, Gb(per * tokens).c_str());
  } else {
    f.p.activations = tw.layers * per * tokens;
    std::snprintf(buf, sizeof buf, "%s: %d layers x %.0f tokens x %.0f B per token", tw.display, tw.layers,
                  tokens, per);
  }
  f.formula = buf;
  return f;
}

int MlpDepth(const std::string& kind) {
  if (kind == "linear") return 1;
  if (kind.size() < 8 || kind.rfind("mlp", 0) != 0 || kind.compare(kind.size() - 6, 6, "x-gelu") != 0)
    return 0;
  const std::string n = kind.substr(3, kind.size() - 9);
  if (n.empty() || n.size() > 1 || n[0] < '1' || n[0] > '8') return 0;
  return n[0] - '0';
}

PartFig ProjectorPart(const Task& t, const std::string& kind, uint64_t in, uint64_t out, int shard) {
  const std::optional<Method> m = TrainedAs(t, "projector");
  const int depth = MlpDepth(kind);
  Local l;
  l.params = static_cast<double>(ProjectorParams(kind, in, out));
  l.linear = static_cast<double>(in * out + (depth - 1) * out * out);
  l.largest_layer = l.params;
  l.largest_linear = static_cast<double>(std::max(in * out, depth > 1 ? out * out : 0));
  l.layer_linear = l.linear;
  l.layers = 1;
  PartFig f = States_(t, "projector", kind, m, l, 0, shard);
  if (!m) {
    f.formula = kind + ": frozen";
    return f;
  }
  // Each linear keeps its input, each GELU its input: in, then (depth - 1) x (GELU input + linear input).
  const double e = t.precision == Precision::kFp32 ? 4 : 2;
  const double tokens = static_cast<double>(t.multimodal.image_tokens) * t.micro_batch;
  const double per = e * (static_cast<double>(in) + 2.0 * (depth - 1) * static_cast<double>(out));
  f.p.activations = tokens * per * t.c.activation_factor;
  f.formula =
      kind + ": " + Count(tokens) + " image tokens x " + Bytes(per) + " B (each linear's and GELU's input)";
  return f;
}

void AddTo(Estimate& e, const std::string& key, double bytes, const std::string& text,
           const std::string& source = "") {
  for (auto& term : e.terms)
    if (term.key == key) {
      term.bytes += bytes;
      if (term.source.empty()) term.source = source;
      if (!text.empty()) term.formula += (term.formula.empty() ? "" : "; ") + text;
      return;
    }
}

// The skeleton of an estimate without a language model (two towers): the terms the parts fill in.
Estimate Skeleton(const Task& t) {
  Estimate e;
  e.gpus = t.gpus;
  e.dp = t.gpus;
  e.shard = t.strategy == Strategy::kFsdpHybrid ? std::min(e.dp, t.c.gpus_per_node) : e.dp;
  e.terms = {{"weights", "weights", 0, "", "", true},
             {"gradients", "gradients", 0, "", "", true},
             {"optimizer", "optimizer states", 0, "", "", true},
             {"activations", "activations", 0, "", kClipLoss, true}};
  return e;
}

void Close(const Task& t, Estimate& e) {
  e.terms.erase(std::remove_if(e.terms.begin(), e.terms.end(),
                               [](const Term& x) { return x.key == "cuda_context" || x.key == "headroom"; }),
                e.terms.end());
  e.allocated = 0;
  for (const auto& term : e.terms) e.allocated += term.bytes;
  const double ctx = static_cast<double>(t.c.cuda_context);
  e.terms.push_back({"cuda_context", "CUDA context", ctx, "constant " + Gb(ctx) + " per GPU",
                     "pytorch/pytorch PR #86509 (CUDA context with lazy module loading)", true});
  const double head = t.c.headroom * e.allocated;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g%% of the allocated subtotal %s", t.c.headroom * 100,
                Gb(e.allocated).c_str());
  e.terms.push_back({"headroom", "headroom", head, buf, "gpuprep default (allocator fragmentation)", true});
  e.per_gpu = e.allocated + ctx + head;
  e.total = e.per_gpu * t.gpus;
}

}  // namespace

const Tower* FindTower(const std::string& name) {
  const std::string key = ToLower(name);
  for (const auto& tw : kTowers)
    if (key == tw.name) return &tw;
  return nullptr;
}

std::vector<std::string> TowerNames() {
  std::vector<std::string> out;
  for (const auto& tw : kTowers) out.emplace_back(tw.name);
  return out;
}

uint64_t TowerParams(const Tower& tw) {
  const uint64_t w = tw.width;
  uint64_t n =
      static_cast<uint64_t>(tw.layers) * BlockParams(w, tw.mlp) + 2 * w + w * tw.proj;  // + final norm
  if (tw.vision)
    n += w + 3ull * tw.patch * tw.patch * w + static_cast<uint64_t>(tw.Tokens()) * w + 2 * w;  // + ln_pre
  else
    n += static_cast<uint64_t>(tw.vocab) * w + static_cast<uint64_t>(tw.context) * w;
  return n;
}

const Preset* FindPreset(const std::string& name) {
  const std::string key = ToLower(name);
  for (const auto& p : kPresets)
    if (key == p.name) return &p;
  return nullptr;
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> out;
  for (const auto& p : kPresets) out.emplace_back(p.name);
  return out;
}

bool KnownProjector(const std::string& kind) { return MlpDepth(kind) > 0; }

uint64_t ProjectorParams(const std::string& kind, uint64_t in, uint64_t out) {
  const int depth = MlpDepth(kind);
  if (depth == 0) return 0;
  return in * out + out + static_cast<uint64_t>(depth - 1) * (out * out + out);
}

namespace {

// A vision-language model: the language model's own estimate over the text and image tokens, as the
// "language" part; the vision tower and the projector go to `parts`.
Estimate MultimodalLanguageBase(const Task& t, const Tower& vision, std::vector<PartFig>& parts) {
  const Task::Multimodal& mm = t.multimodal;
  const std::optional<Method> m = TrainedAs(t, "language");
  Task l = PartTask(t, m);
  l.multimodal = {};
  l.seq = t.seq + mm.image_tokens;
  Estimate e = EstimateTask(l);
  PartEstimate p;
  p.role = "language";
  p.model = e.model;
  p.params = e.params;
  p.trainable = e.trainable;
  p.train = TrainName(m);
  for (const char* k : {"weights", "gradients", "optimizer"})
    if (const Term* term = e.Find(k)) p.states += term->bytes;
  if (const Term* a = e.Find("activations")) p.activations = a->bytes;
  e.parts.push_back(p);
  e.notes.push_back("the language model's sequence: " + std::to_string(t.seq) + " text + " +
                    std::to_string(mm.image_tokens) + " image tokens = " + std::to_string(l.seq));
  if (!m)
    e.notes.push_back(
        "the frozen language model keeps the activations its backward pass needs: the projector's "
        "gradients pass through it");
  parts.push_back(TowerPart(t, "vision", vision, e.shard));
  if (!mm.projector.empty())
    parts.push_back(ProjectorPart(t, mm.projector, vision.width, t.arch.hidden, e.shard));
  return e;
}

// A contrastive (CLIP-like) model: the vision and text towers go to `parts`; the estimate holds the
// contrastive logits and the buffers of both towers together.
Estimate MultimodalContrastiveBase(const Task& t, const Tower& vision, std::vector<PartFig>& parts) {
  const Task::Multimodal& mm = t.multimodal;
  const Tower* text = FindTower(mm.text);
  if (!text) throw UsageError("unknown text encoder " + QuoteToken(mm.text));
  Estimate e = Skeleton(t);
  parts.push_back(TowerPart(t, "vision", vision, e.shard));
  parts.push_back(TowerPart(t, "text", *text, e.shard));
  // Contrastive logits: each GPU's images against every GPU's texts and the reverse, fp32.
  const double b = t.micro_batch, all = static_cast<double>(t.micro_batch) * e.dp;
  AddTo(e, "activations", 2 * b * all * 4,
        "logits 2 x " + Count(b) + " x " + Count(all) + " x 4 B (images to texts and texts to images)");
  Local sum;
  for (const auto& f : parts) {
    sum.params += f.l.params;
    sum.largest_layer = std::max(sum.largest_layer, f.l.largest_layer);
    sum.trainable += f.l.trainable;
    sum.layers += f.l.layers;
  }
  const std::optional<Method> any = sum.trainable > 0 ? std::optional<Method>(Method::kFull) : std::nullopt;
  const States whole = ModelStates(PartTask(t, any), sum, e.shard);
  e.terms.push_back(Buffers(PartTask(t, any), sum, whole, e.shard, e.dp));
  e.model = mm.preset.empty() ? std::string(vision.display) + " + " + text->display
                              : FindPreset(mm.preset)->display;
  return e;
}

// Adds each part's states, activations, parameters and host RAM to the estimate, and the part itself.
void AddMultimodalParts(Estimate& e, const std::vector<PartFig>& parts) {
  for (const auto& f : parts) {
    const std::string who = f.p.model + " (" + f.p.role + ", " + f.p.train + ")";
    AddTo(e, "weights", f.s.weights.bytes, who + ": " + f.s.weights.formula, f.s.weights.source);
    if (f.s.gradients.bytes > 0)
      AddTo(e, "gradients", f.s.gradients.bytes, who + ": " + f.s.gradients.formula, f.s.gradients.source);
    if (f.s.optimizer.bytes > 0)
      AddTo(e, "optimizer", f.s.optimizer.bytes, who + ": " + f.s.optimizer.formula, f.s.optimizer.source);
    AddTo(e, "activations", f.p.activations, f.formula);
    e.params += f.p.params;
    e.trainable += f.p.trainable;
    e.params_per_gpu += f.p.params;
    e.trainable_per_gpu += static_cast<double>(f.p.trainable);
    e.host_per_gpu += f.s.host;
    if (f.s.host > 0) e.host_formula += (e.host_formula.empty() ? "" : " + ") + who + ": " + f.s.host_formula;
    e.parts.push_back(f.p);
  }
}

// With a frozen tower, the activations cite what a frozen tower keeps for its backward pass.
void CiteFrozenTowers(Estimate& e) {
  const bool frozen_tower = std::any_of(e.parts.begin(), e.parts.end(), [](const PartEstimate& p) {
    return p.role != "language" && p.role != "projector" && p.train == "frozen";
  });
  for (auto& term : e.terms)
    if (frozen_tower && term.key == "activations" && term.source.find(kFrozen) == std::string::npos)
      term.source += std::string(term.source.empty() ? "" : "; ") + kFrozen;
}

}  // namespace

Estimate EstimateMultimodal(const Task& t) {
  const Task::Multimodal& mm = t.multimodal;
  const Tower* vision = FindTower(mm.vision);
  if (!vision) throw UsageError("unknown vision encoder " + QuoteToken(mm.vision));
  const bool lm = mm.text.empty();
  std::vector<PartFig> parts;
  Estimate e = lm ? MultimodalLanguageBase(t, *vision, parts) : MultimodalContrastiveBase(t, *vision, parts);
  AddMultimodalParts(e, parts);
  if (!mm.preset.empty() && lm) e.model = FindPreset(mm.preset)->display;
  CiteFrozenTowers(e);
  Close(t, e);
  return e;
}

}  // namespace gp::size
