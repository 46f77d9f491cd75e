// EstimateTask (estimate.h): what one GPU of the heaviest pipeline stage holds, term by term.
#include "size/estimate.h"

#include <algorithm>
#include <cstdio>

#include "size/activations.h"
#include "size/embeddings.h"
#include "size/format.h"
#include "size/multimodal.h"
#include "size/states.h"
#include "util/error.h"

namespace gp::size {
namespace {

constexpr const char* kActSource =
    "Korthikanti et al., Reducing Activation Recomputation in Large Transformer Models, arXiv:2205.05198, "
    "section 4 (per-layer inventory, full and selective recomputation, sequence parallelism), counted for "
    "the "
    "layer code of pytorch/torchtune torchtune/modules and huggingface/transformers (fp32 RMSNorm, repeated "
    "k/v, SwiGLU); logits: fp32 cross-entropy, chunked as torchtune CEWithChunkedOutputLoss";
constexpr const char* kContextSource =
    "pytorch/pytorch PR #86509 (CUDA context with lazy module loading: 287,047,680 bytes); gpuprep's default "
    "0.5 GB leaves room for the cuBLAS workspace and NCCL's communicators";
constexpr const char* kPhaseSource =
    "PyTorch torch.optim.Optimizer.zero_grad (set_to_none=True by default since 2.0: gradients are freed); "
    "pytorch/pytorch torch/optim/adamw.py _multi_tensor_adamw (the default foreach step allocates "
    "torch._foreach_sqrt of every second moment)";
constexpr const char* kLoadSource =
    "huggingface/transformers src/transformers/quantizers/quantizer_bnb_4bit.py create_quantized_param (each "
    "weight is quantized as it is loaded: bnb.nn.Params4bit(value).to(device)); bitsandbytes "
    "bitsandbytes/nn/modules.py Params4bit._quantize (the 16-bit tensor is copied to the GPU, then "
    "quantized)";
constexpr const char* kHeadroomSource =
    "gpuprep default: slack for the caching allocator's fragmentation (reserved minus allocated memory); "
    "Ultralytics AutoBatch aims at 60% of the GPU for the same reason";

double Adapter(const Task& t, const std::vector<Linear>& ls) {
  double n = 0;
  for (const auto& l : ls)
    if (std::find(t.lora_targets.begin(), t.lora_targets.end(), l.name) != t.lora_targets.end())
      n += static_cast<double>(t.lora_rank) * static_cast<double>(l.in + l.out);
  return n;
}

// The layers of stage `stage` (0 = first, pp - 1 = last) when the stack splits evenly in order.
Local StageLocal(const Task& t, const ParamCounts& pc, int stage) {
  Local l;
  const double tp = t.tp;
  l.first = stage == 0;
  l.last = stage == t.pp - 1;
  if (!t.arch.HasShape()) {
    const double total =
        t.params_override > 0 ? static_cast<double>(t.params_override) : static_cast<double>(pc.total);
    l.params = l.linear = l.trainable = total / (tp * t.pp);
    return l;
  }
  const int all = pc.Layers();
  const int per = (all + t.pp - 1) / t.pp;
  const int begin = std::min(all, stage * per), end = std::min(all, begin + per);
  double layer_params = 0, linear = 0, adapters = 0;
  int index = 0;
  for (const auto& g : pc.groups) {
    const int from = std::max(begin, index), to = std::min(end, index + g.count);
    if (to > from) {
      const int n = to - from;
      layer_params += static_cast<double>(n) * static_cast<double>(g.params);
      linear += static_cast<double>(n) * static_cast<double>(g.linear_params);
      adapters += n * Adapter(t, g.linears);
      l.layers += n;
      if (static_cast<double>(g.params) / tp > l.largest_layer) {
        l.largest_layer = static_cast<double>(g.params) / tp;
        l.layer_linear = static_cast<double>(g.linear_params) / tp;
      }
      for (const auto& lin : g.linears)
        l.largest_linear = std::max(l.largest_linear, static_cast<double>(lin.in * lin.out) / tp);
    }
    index += g.count;
  }
  double root =
      (l.first ? static_cast<double>(pc.embedding) : 0) + (l.last ? static_cast<double>(pc.head) : 0);
  if (t.pp > 1 && l.last && t.arch.tied_embeddings)  // the last stage keeps its own copy of the tied matrix
    root += static_cast<double>(t.arch.vocab) * t.arch.hidden;
  // A --params count given next to the shape scales every part to it.
  const double scale = t.params_override > 0 ? static_cast<double>(t.params_override) / pc.total : 1.0;
  l.root = root / tp * scale;
  l.params = (layer_params + root) / tp * scale;
  l.linear = linear / tp * scale;
  l.largest_layer *= scale;
  l.layer_linear *= scale;
  l.trainable = t.method == Method::kFull ? l.params : adapters / tp;
  return l;
}

// The terms above are sizes; they are not all alive at once. The backward pass starts with every
// activation kept and builds the gradients while it frees them; the optimizer step then runs with the
// gradients and its own temporary. The peak is the larger of the two moments, which this term adds to
// (or takes from) the plain sum. Gradients a step frees (zero_grad(set_to_none=True), one micro-batch per
// step, no DeepSpeed partition buffers) are not alive at the start of the backward pass.
Term Phases(const Task& t, const States& s, double activations) {
  const double g = s.gradients.bytes;
  const bool persist = t.grad_accumulation > 1 || !t.c.zero_grad_set_to_none || IsDeepSpeed(t.strategy);
  const double backward = activations + (persist ? g : 0);
  const double step = g + s.step_temp;
  const double peak = std::max(backward, step);
  Term term{"phases", "not at the same time", peak - activations - g, "", kPhaseSource, true};
  std::string f = "peak = max(backward start: activations " + Gb(activations) +
                  (persist ? " + gradients " + Gb(g) + " (kept across micro-batches)"
                           : std::string(" (gradients freed each step)")) +
                  ", optimizer step: gradients " + Gb(g);
  if (s.step_temp > 0) f += " + foreach AdamW temporary " + Gb(s.step_temp);
  f += ") - activations - gradients";
  term.formula = f;
  return term;
}

// QLoRA's load: transformers hands bitsandbytes one 16-bit weight at a time, which it copies to the GPU and
// quantizes there, so the load peaks at the weights quantized so far plus the largest 16-bit weight. It is
// not at the same time as training: the term is what the load needs above the training peak, 0 when below.
Term QloraLoad(const Task& t, const Local& l, const States& s, double training) {
  const double tensor = (t.precision == Precision::kFp32 ? 4 : 2) * l.largest_linear;
  const double peak = s.frozen + tensor;
  Term term{"load", "load (not at the same time)", std::max(0.0, peak - training), "", kLoadSource, true};
  term.formula = "load peak = quantized weights " + Gb(s.frozen) + " + the largest 16-bit weight " +
                 Gb(tensor) + " = " + Gb(peak) + " against the training peak " + Gb(training) +
                 (peak > training ? ": the load is the peak, this term adds the difference" : ": below it");
  return term;
}

// Adds the CUDA context and the headroom (a share of the allocated subtotal) to the allocated memory:
// the per-GPU and the all-GPU totals.
void AddContextAndHeadroom(const Task& t, Estimate& e) {
  const double ctx = static_cast<double>(t.c.cuda_context);
  e.terms.push_back(
      {"cuda_context", "CUDA context", ctx, "constant " + Gb(ctx) + " per GPU", kContextSource, true});
  const double head = t.c.headroom * e.allocated;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g%% of the allocated subtotal %s", t.c.headroom * 100,
                Gb(e.allocated).c_str());
  e.terms.push_back({"headroom", "headroom", head, buf, kHeadroomSource, true});
  e.per_gpu = e.allocated + ctx + head;
  e.total = e.per_gpu * t.gpus;
}

// The stage's notes: the task's and the states', pipeline and tensor parallelism, a lower bound, and what
// full activation checkpointing would keep when activations are a large share.
void AddStageNotes(const Task& t, const Local& l, const States& s, const ActivationEstimate& act,
                   Estimate& e) {
  e.notes = t.notes;
  e.notes.insert(e.notes.end(), s.notes.begin(), s.notes.end());
  if (t.pp > 1)
    e.notes.push_back("pipeline parallel: the " + std::string(l.first ? "first" : "last") + " of " +
                      std::to_string(t.pp) + " stages (the heaviest), " + std::to_string(l.layers) +
                      " layers; 1F1B keeps " + std::to_string(t.pp) +
                      " micro-batches in flight on the first stage");
  if (t.tp > 1)
    e.notes.push_back("tensor parallel " + std::to_string(t.tp) +
                      ": weights and activations split across it, with sequence parallelism (Megatron-LM)");
  if (!act.estimated) e.notes.push_back("the total is a lower bound: activations were not estimated");
  if (act.estimated && t.checkpointing != Checkpointing::kFull && act.bytes > 0.3 * e.allocated) {
    Task gc = t;
    gc.checkpointing = Checkpointing::kFull;
    char note[160];
    std::snprintf(note, sizeof note,
                  "activations are %.0f%% of the allocated memory; --grad-checkpointing full "
                  "keeps %s of them",
                  100 * act.bytes / e.allocated,
                  Gb(Activations(gc, l.layers, l.first, l.last).bytes).c_str());
    e.notes.push_back(note);
  }
}

Estimate ForStage(const Task& t, const ParamCounts& pc, int stage) {
  Estimate e;
  e.model = t.arch.display.empty() ? t.arch.name : t.arch.display;
  e.params = t.params_override > 0 ? t.params_override : pc.total;
  double adapters = 0;
  for (const auto& g : pc.groups) adapters += g.count * Adapter(t, g.linears);
  e.trainable = t.method == Method::kFull ? e.params : static_cast<uint64_t>(adapters);
  e.gpus = t.gpus;
  e.dp = t.gpus / (t.tp * t.pp);
  e.shard = t.strategy == Strategy::kFsdpHybrid ? std::min(e.dp, t.c.gpus_per_node) : e.dp;
  const Local l = StageLocal(t, pc, stage);
  e.params_per_gpu = static_cast<uint64_t>(l.params);

  States s = ModelStates(t, l, e.shard);
  e.trainable_per_gpu = l.trainable;
  e.gather_bytes = s.weight_bytes;
  e.grad_bytes = s.grad_bytes;
  const ActivationEstimate act = Activations(t, l.layers, l.first, l.last);
  Term a{"activations", "activations (incl. logits)",
         act.bytes,     act.estimated ? act.formula : act.why_not,
         kActSource,    act.estimated};
  Term b = Buffers(t, l, s, e.shard, e.dp);
  e.terms = {s.weights, s.gradients, s.optimizer};
  const EmbeddingPlacement emb = PlaceEmbeddings(t);
  if (!t.embedding_tables.empty())
    e.terms.push_back(
        {"embeddings", "embedding tables", emb.gpu_per_gpu, emb.gpu_formula, kEmbeddingSource, true});
  e.terms.insert(e.terms.end(), {a, b, Phases(t, s, act.bytes)});
  for (const auto& term : e.terms) e.allocated += term.bytes;
  if (t.method == Method::kQlora) {
    e.terms.push_back(QloraLoad(t, l, s, e.allocated));
    e.allocated += e.terms.back().bytes;
  }
  AddContextAndHeadroom(t, e);
  e.host_per_gpu = s.host + emb.host_per_gpu;
  e.host_embeddings_per_gpu = emb.host_per_gpu;
  e.host_formula = s.host_formula;
  if (emb.host_per_gpu > 0) e.host_formula += (e.host_formula.empty() ? "" : " + ") + emb.host_formula;
  e.lower_bound = !act.estimated;
  AddStageNotes(t, l, s, act, e);
  return e;
}

}  // namespace

const Term* Estimate::Find(const std::string& key) const {
  for (const auto& t : terms)
    if (t.key == key) return &t;
  return nullptr;
}

Estimate EstimateTask(const Task& t) {
  if (t.tp < 1 || t.pp < 1 || t.gpus < 1 || t.gpus % (t.tp * t.pp) != 0)
    throw UsageError("--gpus must be a multiple of --tp x --pp");
  if (!t.multimodal.vision.empty()) return EstimateMultimodal(t);
  const ParamCounts pc = CountParams(t.arch);
  if (t.pp > 1 && t.arch.HasShape() && pc.Layers() < t.pp)
    throw FlagError("--pp",
                    "more pipeline stages than the model has layers (" + std::to_string(pc.Layers()) + ")");
  Estimate first = ForStage(t, pc, 0);
  if (t.pp == 1) return first;
  Estimate last = ForStage(t, pc, t.pp - 1);
  return last.per_gpu > first.per_gpu ? last : first;
}

std::optional<Fit> SmallestFit(Task t, uint64_t gpu_memory) {
  const int unit = t.tp * t.pp;
  const double mem = static_cast<double>(gpu_memory);
  auto fits = [&](int k, Estimate* out) {
    t.gpus = unit * k;
    Estimate e = EstimateTask(t);
    const bool ok = e.per_gpu <= mem;
    if (out) *out = std::move(e);
    return ok;
  };
  Estimate e;
  if (fits(1, &e)) return Fit{unit, e};
  // Per-GPU memory only falls as the data-parallel degree grows (shards get smaller, buffers stay), so
  // the smallest fit is found by doubling, then halving the interval.
  const int max_k = 65536 / unit;
  if (max_k < 2) return std::nullopt;
  int lo = 1, hi = 2;
  while (hi <= max_k && !fits(hi, nullptr)) lo = hi, hi *= 2;
  if (hi > max_k) {
    if (lo == max_k || !fits(max_k, nullptr)) return std::nullopt;
    hi = max_k;
  }
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid, nullptr) ? hi : lo) = mid;
  }
  fits(hi, &e);
  return Fit{unit * hi, e};
}

}  // namespace gp::size
