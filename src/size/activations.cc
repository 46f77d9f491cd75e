// The activation inventory (activations.h). Per layer and token, in bytes, with e the activation element
// size (2 for 16-bit training, 4 for fp32):
//   decoder (torchtune / transformers Llama code): two RMSNorms that upcast their input to fp32 (4h each,
//     plus e*h for the weight's gradient when the norm trains), the inputs the linear layers keep (e*h or
//     e*f each), flash attention's q, k, v (repeated to every head) and output (4e*qd), the gated MLP's
//     gate, activation and up outputs (3e*f). Full fine-tuning of a Llama layer in bf16: 26h + 8f.
//   encoder (BERT, post-LayerNorm, dropout): Korthikanti's 34h + 5as for 16-bit GPT layers, generalised.
//   A frozen linear keeps no input (autograd only needs its weight); LoRA keeps the targeted layers'
//   inputs and the rank-r intermediate; bitsandbytes before its fix of July 2024 (PR #1270) kept the
//   input of every 4-bit layer (Constants::qlora_saves_inputs).
//   Eager attention adds the attention probabilities (a*s per token and head); flash attention keeps only
//   a per-row statistic instead.
// The logits of the output layer, per token and vocabulary entry, by the loss's precision (task.h):
//   fp32 (the model upcasts the logits, as transformers and torchtune do): e + 12: the logits (e), the fp32
//     log-probabilities the cross-entropy keeps (4), and in the backward pass the fp32 gradients of both
//     (4 + 4); chunked, the gradients exist one chunk at a time: e + 4; compiled, the upcast is fused and the
//     fp32 log-probabilities are recomputed: e + 8, chunked e.
//   16-bit (no upcast: the cross-entropy runs on the 16-bit logits): e + 4: no fp32 copy; the 16-bit
//     log-probabilities (2) and, in the backward pass, their gradient (2), which the logits' own gradient
//     replaces; chunked e + 2; compiled the same, chunked e.
#include "size/activations.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "size/dense.h"

namespace gp::size {
namespace {

struct Ctx {
  const Task& t;
  double e, h, qd, f, a, s, r, dropout;
  bool full, autocast, flash, selective_drop;
};

bool Targeted(const Task& t, const std::string& name) {
  return t.method != Method::kFull &&
         std::find(t.lora_targets.begin(), t.lora_targets.end(), name) != t.lora_targets.end();
}

bool Saves(const Ctx& c, const std::string& name) {
  return c.full || Targeted(c.t, name) || (c.t.method == Method::kQlora && c.t.c.qlora_saves_inputs);
}

double Lora(const Ctx& c, std::initializer_list<const char*> names) {
  double n = 0;
  for (const char* name : names)
    if (Targeted(c.t, name)) n += c.e * c.r;
  return n;
}

// Attention probabilities kept per token, head and key. `upcast`: the layer code computes softmax in fp32
// and casts the result back (transformers Llama and T5); otherwise softmax runs in the activation dtype,
// or in fp32 under autocast, which then casts the probabilities again for the second matmul.
double Probs(const Ctx& c, bool upcast) {
  if (c.selective_drop) return 0;  // selective recomputation recomputes exactly these
  const bool drop = c.dropout > 0;
  if (upcast) {
    if (c.e == 4) return drop ? 9 : 4;
    return drop ? 4 + 1 + c.e : 4 + c.e;
  }
  const double pb = c.autocast ? 4 : c.e;
  return pb + (drop ? 1 + pb : 0) + (c.autocast ? c.e : 0);
}

double Attention(const Ctx& c, bool upcast, bool cross) {
  double n = 0;
  if (cross) {
    // The query comes from the decoder, keys and values from the encoder's output: two inputs.
    if (Saves(c, "q")) n += c.e * c.h;
    if (Saves(c, "k") || Saves(c, "v")) n += c.e * c.h;
  } else if (Saves(c, "q") || Saves(c, "k") || Saves(c, "v")) {
    n += c.e * c.h;
  }
  if (c.flash)
    n += 4 * c.e * c.qd;
  else
    n += 3 * c.e * c.qd + Probs(c, upcast) * c.a * c.s;
  if (Saves(c, "o")) n += c.e * c.qd;
  if (c.dropout > 0) n += c.h;  // mask of the dropout after the output projection
  return n + Lora(c, {"q", "k", "v", "o"});
}

double Mlp(const Ctx& c, bool gated, bool inner_dropout) {
  double n = 0;
  if (Saves(c, "gate") || Saves(c, "up")) n += c.e * c.h;
  // gate, activation and up outputs (compiled: the activation is recomputed) / the activation's input
  n += gated ? (c.t.compile ? 2 : 3) * c.e * c.f : c.e * c.f;
  if (inner_dropout && c.dropout > 0) n += c.f;
  if (Saves(c, "down")) n += c.e * c.f;
  if (c.dropout > 0) n += c.h;
  return n + Lora(c, {"gate", "up", "down"});
}

// RMSNorm as torchtune and transformers write it: the fp32 copy of the input, and the normalized tensor
// for the weight's gradient when the weight trains.
// Compiled (torch.compile: AOTAutograd's partitioner recomputes fused element-wise chains in the
// backward pass), the norm keeps only its 16-bit input.
double PreNorm(const Ctx& c) {
  if (c.t.compile) return c.e * c.h;
  return 4 * c.h + (c.full ? c.e * c.h : 0);
}
// BERT's LayerNorm (a native op) keeps its input: fp32 under autocast.
double PostNorm(const Ctx& c) { return (c.autocast || c.e == 4 ? 4 : c.e) * c.h; }

double LayerEager(const Ctx& c, LayerRole role);

Ctx MakeCtx(const Task& t, bool selective_drop) {
  const Architecture& a = t.arch;
  Ctx c{t, 0, 0, 0, 0, 0, 0, 0, 0, false, false, false, selective_drop};
  c.e = t.precision == Precision::kFp32 ? 4 : 2;
  c.h = a.hidden;
  c.qd = static_cast<double>(a.heads) * a.HeadDim();
  c.f = a.ffn;
  c.a = a.heads;
  c.s = t.seq;
  c.r = t.lora_rank;
  c.full = t.method == Method::kFull;
  c.autocast =
      t.strategy == Strategy::kDdp && t.precision != Precision::kFp32 && t.precision != Precision::kBf16Pure;
  c.flash = t.flash_attention && a.family != Family::kEncoderDecoder;
  c.dropout = t.dropout >= 0 ? t.dropout : (a.family == Family::kDecoder ? 0.0 : 0.1);
  return c;
}

// Dropout before LoRA's A matrix (PEFT lora_dropout): each distinct input of a targeted layer gets a mask
// (1 byte) and the dropped copy A keeps (e bytes).
double LoraDropout(const Ctx& c) {
  if (c.t.method == Method::kFull || c.t.lora_dropout <= 0 || c.t.compile) return 0;
  double n = 0;
  auto any = [&](std::initializer_list<const char*> names) {
    for (const char* name : names)
      if (Targeted(c.t, name)) return true;
    return false;
  };
  if (any({"q", "k", "v"})) n += (1 + c.e) * c.h;
  if (any({"o"})) n += (1 + c.e) * c.qd;
  if (any({"gate", "up"})) n += (1 + c.e) * c.h;
  if (any({"down"})) n += (1 + c.e) * c.f;
  return n;
}

double Layer(const Ctx& c, LayerRole role) { return LoraDropout(c) + LayerEager(c, role); }

double LayerEager(const Ctx& c, LayerRole role) {
  switch (role) {
    case LayerRole::kDecoder:
      return PreNorm(c) + Attention(c, true, false) + PreNorm(c) + Mlp(c, c.t.arch.gated_mlp, false);
    case LayerRole::kEncoder:
      return Attention(c, false, false) + PostNorm(c) + Mlp(c, false, false) + PostNorm(c);
    case LayerRole::kT5Encoder:
      return PreNorm(c) + Attention(c, true, false) + PreNorm(c) + Mlp(c, c.t.arch.gated_mlp, true);
    case LayerRole::kT5Decoder:
      return PreNorm(c) + Attention(c, true, false) + PreNorm(c) + Attention(c, true, true) + PreNorm(c) +
             Mlp(c, c.t.arch.gated_mlp, true);
  }
  return 0;
}

// The layer's bytes per token as a formula in h, qd (query width), f, a*s and r: the inventory is linear
// in them, so each coefficient is the inventory evaluated with that one dimension set to 1.
std::string Symbolic(const Ctx& c, LayerRole role) {
  struct Dim {
    const char* name;
    double Ctx::*field;
  };
  const Dim dims[] = {{"h", &Ctx::h}, {"qd", &Ctx::qd}, {"f", &Ctx::f}, {"as", &Ctx::s}, {"r", &Ctx::r}};
  std::string out;
  for (const auto& d : dims) {
    Ctx one = c;
    one.h = one.qd = one.f = one.s = one.r = 0;
    one.*(d.field) = 1;
    if (d.field == &Ctx::s) one.a = c.a;
    double k = Layer(one, role);
    if (d.field == &Ctx::s) k /= c.a;  // per head and key
    if (k <= 0) continue;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%g%s", out.empty() ? "" : " + ", k, d.name);
    out += buf;
  }
  return out.empty() ? "0" : out;
}

// Bytes per token and vocabulary entry of the logits and the loss (the table at the top of this file).
double LogitBytes(double e, bool chunked, bool compiled, bool loss16) {
  if (compiled && chunked) return e;
  if (loss16) return chunked ? e + 2 : e + 4;
  if (compiled) return e + 8;
  return chunked ? e + 4 : e + 12;
}

std::string Num(double v) {
  char buf[64];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3g GB", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3g MB", v / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", v);
  return buf;
}

// The last stage's logits, the final norm and what the loss keeps, added to `r` with their formula.
void AddLogitActivations(const Task& t, const Ctx& c, double tokens, ActivationEstimate& r) {
  const Architecture& a = t.arch;
  char buf[512];
  const bool loss16 = LossPrecisionOf(t) == LossPrecision::k16bit;
  const double per_elem = LogitBytes(c.e, t.chunked_loss, t.compile, loss16);
  r.logits = static_cast<double>(t.seq) * t.micro_batch * a.vocab * per_elem / t.tp + PreNorm(c) * tokens +
             (c.full ? c.e * c.h * tokens : 0);
  std::snprintf(buf, sizeof buf, " + logits %.0f tokens x %d vocabulary x %.0f B (%s %s cross-entropy)",
                static_cast<double>(t.seq) * t.micro_batch, a.vocab, per_elem,
                t.chunked_loss ? "chunked" : "whole", loss16 ? "16-bit" : "fp32");
  r.formula += buf;
  if (t.tp > 1) r.formula += " / " + std::to_string(t.tp) + " (tensor parallel)";
}

}  // namespace

double LayerBytesPerToken(const Task& t, LayerRole role) {
  const bool selective = t.checkpointing == Checkpointing::kSelective;
  return Layer(MakeCtx(t, selective), role) * t.c.activation_factor;
}

ActivationEstimate Activations(const Task& t, int layers_here, bool first_stage, bool last_stage) {
  if (t.arch.family == Family::kVision) return VisionActivations(t);
  if (!t.dense.layers.empty()) return DenseActivations(t);
  ActivationEstimate r;
  const Architecture& a = t.arch;
  if (!a.HasShape()) {
    r.estimated = false;
    r.why_not = "not estimated: needs the model's layers, hidden size and heads (lower bound)";
    return r;
  }
  const Ctx c = MakeCtx(t, t.checkpointing == Checkpointing::kSelective);
  const double tokens = static_cast<double>(t.seq) * t.micro_batch / t.tp;  // sequence parallel with TP
  const int in_flight = first_stage ? t.pp : 1;                             // 1F1B keeps pp on stage 0
  // The layer kinds this stage holds: encoder-decoder stages split the stack in order.
  const ParamCounts pc = CountParams(a);
  double layer_sum = 0, largest = 0;
  int remaining = layers_here;
  for (const auto& g : pc.groups) {
    const int n = std::min(remaining, g.count);
    const double per = Layer(c, g.role) * t.c.activation_factor;
    layer_sum += n * per;
    largest = std::max(largest, per);
    remaining -= n;
  }
  const int counted = layers_here - remaining;
  char buf[512];
  double layers_bytes = 0;
  if (t.checkpointing == Checkpointing::kFull) {
    // Each layer keeps only its input; the backward pass recomputes one layer at a time.
    const double stored = c.e * c.h;
    layers_bytes = (counted * stored * in_flight + largest) * tokens;
    r.per_layer = stored * tokens;
    std::snprintf(buf, sizeof buf,
                  "full recomputation: %d layers x %.0f tokens x %.0f B (each layer's input)%s + one "
                  "layer recomputed (%s)",
                  counted, tokens, stored, in_flight > 1 ? " x in-flight micro-batches" : "",
                  Num(largest * tokens).c_str());
  } else {
    layers_bytes = layer_sum * tokens * in_flight;
    r.per_layer = counted > 0 ? layer_sum / counted * tokens : 0;
    std::snprintf(
        buf, sizeof buf, "%d layers x %.0f tokens x %.0f B per token [%s] x %g (activation factor)%s",
        counted, tokens, counted > 0 ? layer_sum / counted / t.c.activation_factor : 0.0,
        Symbolic(c, pc.groups.front().role).c_str(), t.c.activation_factor,
        in_flight > 1 ? (" x " + std::to_string(in_flight) + " in-flight micro-batches").c_str() : "");
  }
  r.formula = buf;
  if (first_stage && a.family == Family::kEncoder)
    layers_bytes += (PostNorm(c) + (c.dropout > 0 ? c.h : 0)) * tokens;  // embedding LayerNorm and dropout
  if (last_stage && a.family != Family::kEncoder) AddLogitActivations(t, c, tokens, r);
  r.bytes = layers_bytes + r.logits;
  return r;
}

}  // namespace gp::size
