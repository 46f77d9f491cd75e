// Model states and buffers (states.h). Bytes per parameter, by precision and framework:
//   fp32: weights 4, gradients 4, AdamW 8 (two fp32 moments).
//   16-bit mixed, DeepSpeed, as its own estimators count (deepspeed/runtime/zero/stage_1_and_2.py
//     estimate_zero2_model_states_mem_needs, stage3.py estimate_zero3_model_states_mem_needs, at
//     deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641): 16-bit weights 2, optimizer K = 12
//     (fp32 master copy 4 + two moments 8), gradients: ZeRO-1/2 the 16-bit gradients 2 and their fp32
//     copy 4 (2 + 18/N in all for ZeRO-2), ZeRO-3 the fp32 copy 4 (18/N; the 16-bit gradients exist for
//     the gathered layer only, a buffer). --grad-bytes N gives the ZeRO paper's layout instead (2 + 2 + K).
//   ZeRO-Offload (--offload optimizer) moves the fp32 master copy, the moments and the fp32 gradients to
//     the CPU (16 bytes there; the GPU keeps the 16-bit weights), parameter offload the 16-bit weights too
//     (18). The host figure is DeepSpeed's: those bytes, or while the model is built the fp32 model each
//     process makes (4 bytes per parameter; under ZeRO-3's zero.Init 4 per parameter of the largest
//     layer), whichever is larger, times additional_buffer_factor (1.5).
//   16-bit mixed, DDP with autocast: fp32 weights 4 + the 16-bit copies autocast makes 2, fp32 gradients 4,
//     AdamW 8: 18 bytes (the Hugging Face model memory anatomy page's count).
//   16-bit mixed, FSDP: fp32 flat parameters 4, fp32 gradients 4, AdamW 8, sharded; the 16-bit copies are
//     the gathered units, counted in buffers.
//   bf16 pure: weights 2, gradients 2, optimizer states in bf16 (AdamW 4); DeepSpeed still creates an fp32
//     master copy and fp32 moments (16 bytes).
//   fp8: as 16-bit mixed (Transformer Engine keeps the weights in higher precision), plus FP8 weight copies.
#include "size/states.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "size/format.h"

namespace gp::size {
namespace {

constexpr const char* kZero =
    "Rajbhandari et al., ZeRO: Memory Optimizations Toward Training Trillion Parameter Models, "
    "arXiv:1910.02054, "
    "section 3.1 (2 + 2 + K bytes per parameter, K = 12) and section 5 (partitioning P_os, P_g, P_p)";
constexpr const char* kAnatomy =
    "huggingface/transformers docs/source/en/model_memory_anatomy.md (mixed precision: 6 bytes of weights, "
    "4 of gradients, 8 of AdamW states per parameter)";
constexpr const char* kUpcast =
    "huggingface/accelerate docs/source/concept_guides/fsdp_and_deepspeed.md (DeepSpeed creates its flat "
    "parameters and optimizer in fp32; FSDP in the parameter dtype)";
constexpr const char* kPeft =
    "huggingface/peft docs/source/developer_guides/memory_efficient_training.md (frozen base weights, "
    "gradients "
    "and optimizer states only for the adapters, which PEFT keeps in fp32)";
constexpr const char* kQlora =
    "Dettmers et al., QLoRA: Efficient Finetuning of Quantized LLMs, arXiv:2305.14314, section 3 (NF4 in "
    "blocks of 64 with one fp32 scale each; double quantization: 0.127 bit per parameter); bitsandbytes "
    "bitsandbytes/nn/modules.py Params4bit (blocksize 64); embeddings and the output layer stay 16-bit";
constexpr const char* kBnb8 =
    "bitsandbytes docs/source/optimizers.mdx (8-bit optimizer states, 75% less than 32-bit Adam)";
constexpr const char* kTe =
    "NVIDIA/TransformerEngine docs/examples/fp8_primer.ipynb and te_gemma tutorial (weights are stored in "
    "higher precision and cast to FP8 before each GEMM)";
constexpr const char* kDdp =
    "PyTorch torch.nn.parallel.DistributedDataParallel documentation, gradient_as_bucket_view (without it "
    "the "
    "allreduce buckets hold a copy of every gradient)";
constexpr const char* kDsConfig =
    "deepspeedai/DeepSpeed deepspeed/runtime/zero/config.py@edaa7221 (reduce_bucket_size 5e8, "
    "stage3_prefetch_bucket_size 5e7) and stage3.py estimate_zero3_model_states_mem_needs (4 bytes x the "
    "largest layer)";
constexpr const char* kDsEstimator =
    "deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641 deepspeed/runtime/zero/stage_1_and_2.py "
    "estimate_zero2_model_states_mem_needs (GPU 2 x P + 18 x P / N: 16-bit gradients 2, fp32 gradients 4, "
    "fp32 parameters 4, moments 8; offloaded: GPU 2 x P, CPU P x max(4 x GPUs, 16) x 1.5) and stage3.py "
    "estimate_zero3_model_states_mem_needs (GPU 4 x largest layer + 18 x P / N, offloaded optimizer 2 x P / "
    "N, "
    "offloaded parameters 0; CPU 16 or 18 x P / nodes x 1.5 under zero.Init); "
    "docs/code-docs/source/memory.rst "
    "(the 16 and 18 multipliers)";
constexpr const char* kFsdp =
    "PyTorch FSDP documentation (FULL_SHARD gathers one unit at a time and BACKWARD_PRE prefetches the next; "
    "SHARD_GRAD_OP keeps the parameters gathered from forward to backward); huggingface/accelerate "
    "docs/source/usage_guides/fsdp.md (FULL_SHARD = ZeRO-3, SHARD_GRAD_OP = ZeRO-2, HYBRID_SHARD within a "
    "node)";

int StateCount(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
    case Optimizer::kAdamW8bit:
      return 2;
    case Optimizer::kSgdMomentum:
      return 1;
    case Optimizer::kSgd:
      return 0;
  }
  return 0;
}

// Bytes of optimizer states per trainable parameter at `state_bytes` per state (8-bit: 1 per state).
double StateBytes(Optimizer o, double state_bytes) {
  if (o == Optimizer::kAdamW8bit) return 2;
  return StateCount(o) * state_bytes;
}

std::string Shard(int n, const char* what) {
  return n > 1 ? " / " + std::to_string(n) + " (" + what + ")" : "";
}

void MoveToHost(Term& term, double host_bytes, States& s) {
  s.host += host_bytes;
  term.formula = "offloaded to CPU RAM (" + Gb(host_bytes) + " per GPU there): " + term.formula;
  term.bytes = 0;
}

// ZeRO-Offload takes the gradients with the optimizer states (the fp32 copy where DeepSpeed keeps one; its
// 16-bit gradients then pass through the reduce bucket only); parameter offload takes the weights too. The
// host figure: DeepSpeed's (kDsEstimator), the offloaded states elsewhere.
void Offloaded(const Task& t, States& s) {
  if (t.offload != Offload::kNone) {
    MoveToHost(s.optimizer, s.optimizer.bytes, s);
    MoveToHost(s.gradients, s.grad_fp32 > 0 ? s.grad_fp32 : s.gradients.bytes, s);
    s.grad_fp32 = 0;
  }
  if (t.offload == Offload::kParams) MoveToHost(s.weights, s.weights.bytes, s);
  if (!IsDeepSpeed(t.strategy)) {
    if (s.host > 0) s.host_formula = "offloaded states " + Gb(s.host);
    return;
  }
  const double states = s.host, f = t.c.host_buffer_factor;
  s.host = std::max(states, s.host_load) * f;
  if (s.host <= 0) return;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%g", f);
  s.host_formula = (s.host_load > 0 ? "max(offloaded states " + Gb(states) +
                                          ", the fp32 model built at start " + Gb(s.host_load) + ")"
                                    : "offloaded states " + Gb(states)) +
                   " x " + buf + " (DeepSpeed's additional_buffer_factor)";
}

// How ModelStates divides each kind of state over the `shard` ranks ZeRO/FSDP shards over.
struct StatesSharding {
  bool ds = false;
  int sw = 1, sg = 1, so = 1;  // the divisors of the weights, the gradients, the optimizer states
  const char* how = "";        // the name of the sharding, for the formulas
};

StatesSharding StatesShardingFor(const Task& t, int shard) {
  const Strategy st = t.strategy;
  const bool ds = IsDeepSpeed(st), fsdp = IsFsdp(st);
  const bool shard_w = st == Strategy::kZero3 || fsdp;
  const bool shard_g = st == Strategy::kZero2 || st == Strategy::kZero3 || fsdp;
  const bool shard_o = st != Strategy::kDdp;
  StatesSharding sh;
  sh.ds = ds;
  sh.sw = shard_w ? shard : 1, sh.sg = shard_g ? shard : 1, sh.so = shard_o ? shard : 1;
  sh.how = ds ? "ZeRO shards" : "FSDP shards";
  return sh;
}

// A full fine-tune's bytes per parameter, by precision and framework, with the layout named in the
// formulas and the source they cite.
struct FullStateLayout {
  double w = 2, g = 2, master = 0, state = 4;  // bytes per parameter
  double g32 = 0;                              // DeepSpeed's fp32 gradient copy
  std::string wsrc = kZero, layout;
};

FullStateLayout FullStateLayoutFor(const Task& t, bool ds, States& s) {
  const Strategy st = t.strategy;
  FullStateLayout f;
  if (t.precision == Precision::kFp32) {
    f.w = 4, f.g = 4, f.master = 0, f.state = 4;
    f.layout = "fp32";
    f.wsrc = kAnatomy;
  } else if (t.precision == Precision::kBf16Pure && !ds) {
    f.w = 2, f.g = 2, f.master = 0, f.state = 2;
    f.layout = "bf16 weights, gradients and optimizer states";
    f.wsrc = kUpcast;
  } else if (ds) {
    f.w = 2, f.g = 2, f.master = 4, f.state = 4;
    f.layout = "16-bit weights and gradients, fp32 master copy and moments";
    if (t.precision == Precision::kBf16Pure)
      s.notes.push_back(
          "DeepSpeed keeps an fp32 master copy and fp32 optimizer states even for a bf16 model");
  } else if (st == Strategy::kDdp) {
    f.w = 6, f.g = 4, f.master = 0, f.state = 4;
    f.layout = "fp32 weights + the 16-bit copies autocast makes, fp32 gradients";
    f.wsrc = kAnatomy;
  } else {  // FSDP mixed precision: fp32 flat parameters; 16-bit gathered units are buffers
    f.w = 4, f.g = 4, f.master = 0, f.state = 4;
    f.layout = "fp32 flat parameters and gradients (16-bit gathered units: buffers)";
    f.wsrc = kUpcast;
  }
  // DeepSpeed's fp32 gradient copy, sharded with the optimizer states (ZeRO-3: the 16-bit gradients are
  // only the gathered layer's, in buffers).
  if (ds && f.master > 0 && t.c.grad_bytes == 0) {
    f.g32 = 4;
    if (st == Strategy::kZero3) f.g = 0;
    f.wsrc = kDsEstimator;
    f.layout += ", fp32 gradient copy";
  }
  if (t.c.grad_bytes > 0) f.g = t.c.grad_bytes;
  return f;
}

// A full fine-tune's weights, gradients and optimizer states (every parameter trained).
void FullModelStates(const Task& t, const Local& l, const StatesSharding& sh, States& s) {
  const FullStateLayout f = FullStateLayoutFor(t, sh.ds, s);
  const double w = f.w, g = f.g, master = f.master, state = f.state, g32 = f.g32;
  const int sw = sh.sw, sg = sh.sg, so = sh.so;
  const char* how = sh.how;
  s.weight_bytes = t.precision == Precision::kFp32 ? 4 : 2;
  s.grad_bytes = g > 0 ? g : 2;
  const double P = l.params;
  s.weights = {
      "weights",  "weights",
      w * P / sw, Bytes(w) + " B x " + Count(P) + " parameters" + Shard(sw, how) + " [" + f.layout + "]",
      f.wsrc,     true};
  s.grad_fp32 = g32 * P / so;
  std::string gf = g > 0 ? Bytes(g) + " B x " + Count(P) + Shard(sg, how) : std::string();
  if (g32 > 0) gf += (gf.empty() ? "" : " + ") + Bytes(g32) + " B fp32 copy x " + Count(P) + Shard(so, how);
  s.gradients = {"gradients", "gradients", g * P / sg + s.grad_fp32, gf, f.wsrc, true};
  // DeepSpeed builds the model in fp32 on the CPU of every process first (zero.Init under ZeRO-3: one
  // layer at a time).
  if (sh.ds) s.host_load = 4 * (t.strategy == Strategy::kZero3 ? l.largest_layer : P);
  const double ob = master + StateBytes(t.optimizer, state);
  std::string of = (master > 0 ? Bytes(master) + " B master copy + " : "") +
                   std::to_string(StateCount(t.optimizer)) + " state(s)";
  of += t.optimizer == Optimizer::kAdamW8bit ? " x 1 B (8-bit)" : " x " + Bytes(state) + " B";
  s.optimizer = {"optimizer",
                 "optimizer states",
                 ob * P / so,
                 "(" + of + ") x " + Count(P) + Shard(so, how),
                 t.optimizer == Optimizer::kAdamW8bit ? std::string(kBnb8) : f.wsrc,
                 true};
  if (t.c.foreach_optimizer && !sh.ds && t.optimizer == Optimizer::kAdamW && t.offload == Offload::kNone)
    s.step_temp = state * P / so;
}

// LoRA / QLoRA's frozen base weights in bytes, with their formula; sets the weight bytes per parameter
// (and QLoRA's frozen share of the weights).
double AdapterFrozenBase(const Task& t, const Local& l, int sw, States& s, std::string& bf) {
  const double frozen_b = t.precision == Precision::kFp32 ? 4 : 2;
  double base = 0;
  if (t.method == Method::kQlora) {
    const double nf4 =
        t.c.qlora_double_quant ? 0.5 + 8.0 / 64 / 8 + 32.0 / (64 * 256) / 8 : 0.5 + 32.0 / 64 / 8;
    base = nf4 * l.linear + frozen_b * (l.params - l.linear);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.4f B x %s linear weights (NF4%s) + %s B x %s other", nf4,
                  Count(l.linear).c_str(), t.c.qlora_double_quant ? ", double quantization" : "",
                  Bytes(frozen_b).c_str(), Count(l.params - l.linear).c_str());
    bf = buf;
    s.weight_bytes = l.params > 0 ? base / l.params : 2;
    s.frozen = base / sw;
  } else {
    base = frozen_b * l.params;
    bf = Bytes(frozen_b) + " B x " + Count(l.params) + " frozen";
    s.weight_bytes = frozen_b;
  }
  return base;
}

// LoRA / QLoRA: frozen base weights, trainable adapters.
void AdapterModelStates(const Task& t, const Local& l, const StatesSharding& sh, States& s) {
  const int sw = sh.sw, sg = sh.sg, so = sh.so;
  const char* how = sh.how;
  std::string bf;
  const double base = AdapterFrozenBase(t, l, sw, s, bf);
  const double ab = t.c.lora_adapter_bytes;
  const double T = l.trainable;
  s.grad_bytes = ab;
  s.weights = {"weights",
               "weights",
               (base + ab * T) / sw,
               "(" + bf + " + " + Bytes(ab) + " B x " + Count(T) + " adapter parameters)" + Shard(sw, how),
               t.method == Method::kQlora ? kQlora : kPeft,
               true};
  s.gradients = {"gradients", "gradients",
                 ab * T / sg, Bytes(ab) + " B x " + Count(T) + " adapter parameters" + Shard(sg, how),
                 kPeft,       true};
  const double master_b = sh.ds && ab < 4 ? 4 : 0;
  const double sb = StateBytes(t.optimizer, ab);
  s.optimizer = {"optimizer",
                 "optimizer states",
                 (master_b + sb) * T / so,
                 "(" + (master_b > 0 ? Bytes(master_b) + " B master + " : std::string()) + Bytes(sb) +
                     " B) x " + Count(T) + " adapter parameters" + Shard(so, how),
                 kPeft,
                 true};
  if (t.c.foreach_optimizer && !sh.ds && t.optimizer == Optimizer::kAdamW && t.offload == Offload::kNone)
    s.step_temp = ab * T / so;
}

}  // namespace

States ModelStates(const Task& t, const Local& l, int shard) {
  States s;
  const StatesSharding sh = StatesShardingFor(t, shard);
  if (t.method == Method::kFull)
    FullModelStates(t, l, sh, s);
  else
    AdapterModelStates(t, l, sh, s);
  Offloaded(t, s);
  return s;
}

Term Buffers(const Task& t, const Local& l, const States& s, int shard, int dp) {
  std::vector<std::string> parts;
  std::vector<std::string> sources;
  double bwd = 0;
  auto add = [&](double bytes, const std::string& what, const char* src) {
    if (bytes <= 0) return;
    bwd += bytes;
    parts.push_back(Gb(bytes) + " " + what);
    if (std::find(sources.begin(), sources.end(), src) == sources.end()) sources.push_back(src);
  };
  const Strategy st = t.strategy;
  const bool full = t.method == Method::kFull;
  if (st == Strategy::kDdp && dp > 1 && !t.c.ddp_bucket_view)
    add(s.gradients.bytes, "DDP allreduce buckets (a copy of the gradients)", kDdp);
  if ((st == Strategy::kZero1 || st == Strategy::kZero2) && dp > 1)
    add(static_cast<double>(t.c.zero_reduce_bucket) * 2,
        "ZeRO reduce bucket (" + Count(t.c.zero_reduce_bucket) + " elements x 2 B)", kDsConfig);
  if (st == Strategy::kZero3) {
    const double layer = (full ? 4 : 2) * l.largest_layer;
    add(layer,
        "largest layer gathered (" + std::string(full ? "16-bit weights and gradients" : "16-bit weights") +
            ")",
        kDsConfig);
    add(std::min(static_cast<double>(t.c.zero3_prefetch_bucket), l.params) * 2, "ZeRO-3 prefetch bucket",
        kDsConfig);
    if (full && dp > 1)
      add(std::min(static_cast<double>(t.c.zero_reduce_bucket), l.params) * 2, "ZeRO reduce bucket",
          kDsConfig);
  }
  if ((st == Strategy::kFsdp || st == Strategy::kFsdpHybrid) &&
      (shard > 1 || t.offload == Offload::kParams)) {
    const double wb = s.weight_bytes;
    add(wb * (l.root + 2 * l.largest_layer),
        "FSDP gathered units (the root unit with embeddings and output layer, the current and the prefetched "
        "layer)",
        kFsdp);
    if (full) add(2 * l.largest_layer, "unsharded 16-bit gradients of one unit before reduce-scatter", kFsdp);
  }
  if (st == Strategy::kFsdpGradOp && shard > 1)
    add(s.weight_bytes * l.params, "SHARD_GRAD_OP: every unit stays gathered from forward to backward",
        kFsdp);
  if (t.precision == Precision::kFp8) {
    const bool gathered = st == Strategy::kZero3 || IsFsdp(st);
    const double copies = t.c.fp8_copy_bytes * (gathered ? 2 * l.layer_linear : l.linear);
    add(copies, "FP8 copies of the linear weights", kTe);
  }
  if (t.method == Method::kQlora)
    add(2 * l.largest_linear, "one 4-bit weight dequantized to 16 bits", kQlora);

  Term term{"buffers", "temporary buffers", bwd, "", "", true};
  std::string f = parts.empty() ? "none" : parts.front();
  for (size_t i = 1; i < parts.size(); ++i) f += " + " + parts[i];
  term.formula = f;
  for (size_t i = 0; i < sources.size(); ++i) term.source += (i ? "; " : "") + sources[i];
  if (term.source.empty()) term.source = "-";
  return term;
}

}  // namespace gp::size
