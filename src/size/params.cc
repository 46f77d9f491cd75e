// Parameter counts from hyper-parameters (model.h). The formulas follow the layer definitions of the
// reference implementations the model table cites: torchtune's Llama/Mistral/Qwen2 component builders,
// Hugging Face transformers' BertModel and T5Model. tests/size/params_test.cc checks them against the
// counts the model publishers give.
#include <algorithm>

#include "size/model.h"

namespace gp::size {
namespace {

using u64 = uint64_t;

u64 Sum(const std::vector<Linear>& ls) {
  u64 n = 0;
  for (const auto& l : ls) n += l.in * l.out;
  return n;
}

u64 Biases(const std::vector<Linear>& ls) {
  u64 n = 0;
  for (const auto& l : ls)
    if (l.bias) n += l.out;
  return n;
}

void AddAttention(std::vector<Linear>& ls, const Architecture& a, bool bias_qkv, bool bias_o) {
  const u64 h = static_cast<u64>(a.hidden), d = static_cast<u64>(a.HeadDim());
  const u64 q = static_cast<u64>(a.heads) * d,
            kv = static_cast<u64>(a.kv_heads > 0 ? a.kv_heads : a.heads) * d;
  ls.push_back({"q", h, q, bias_qkv});
  ls.push_back({"k", h, kv, bias_qkv});
  ls.push_back({"v", h, kv, bias_qkv});
  ls.push_back({"o", q, h, bias_o});
}

void AddMlp(std::vector<Linear>& ls, const Architecture& a, bool bias) {
  const u64 h = static_cast<u64>(a.hidden), f = static_cast<u64>(a.ffn);
  if (a.gated_mlp) ls.push_back({"gate", h, f, bias});
  ls.push_back({"up", h, f, bias});
  ls.push_back({"down", f, h, bias});
}

LayerGroup Group(LayerRole role, int count, std::vector<Linear> ls, u64 norms) {
  LayerGroup g;
  g.role = role;
  g.count = count;
  g.linear_params = Sum(ls);
  g.params = g.linear_params + Biases(ls) + norms;
  g.linears = std::move(ls);
  return g;
}

}  // namespace

const char* FamilyName(Family f) {
  switch (f) {
    case Family::kDecoder:
      return "decoder";
    case Family::kEncoder:
      return "encoder";
    case Family::kEncoderDecoder:
      return "encoder-decoder";
    case Family::kVision:
      return "vision";
  }
  return "?";
}

uint64_t ParamCounts::LayerParams() const {
  u64 n = 0;
  for (const auto& g : groups) n += g.params * static_cast<u64>(g.count);
  return n;
}

uint64_t ParamCounts::LargestLayer() const {
  u64 n = 0;
  for (const auto& g : groups) n = std::max(n, g.params);
  return n;
}

int ParamCounts::Layers() const {
  int n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

ParamCounts CountParams(const Architecture& a) {
  ParamCounts c;
  const u64 h = static_cast<u64>(a.hidden), v = static_cast<u64>(a.vocab);
  switch (a.family) {
    case Family::kVision:
      c.head = a.vision_params;
      break;
    case Family::kDecoder: {
      // torchtune llama3/qwen2 component builders: q/k/v/o (qkv bias for Qwen2), gate/up/down, two RMSNorms.
      std::vector<Linear> ls;
      AddAttention(ls, a, a.qkv_bias, false);
      AddMlp(ls, a, false);
      c.groups.push_back(Group(LayerRole::kDecoder, a.layers, std::move(ls), 2 * h));
      c.embedding = v * h;
      c.head = h + (a.tied_embeddings ? 0 : v * h);  // final norm, untied output projection
      break;
    }
    case Family::kEncoder: {
      // transformers BertModel: every linear has a bias; two LayerNorms (weight and bias) per layer.
      std::vector<Linear> ls;
      AddAttention(ls, a, true, true);
      AddMlp(ls, a, true);
      c.groups.push_back(Group(LayerRole::kEncoder, a.layers, std::move(ls), 4 * h));
      c.embedding = (v + static_cast<u64>(a.positions) + static_cast<u64>(a.token_types)) * h + 2 * h;
      c.head = h * h + h;  // pooler
      break;
    }
    case Family::kEncoderDecoder: {
      // transformers T5Model: no biases; weight-only RMS LayerNorms; the relative-position table lives
      // in the first layer of each stack (counted in `head`); decoder layers add cross-attention.
      std::vector<Linear> enc;
      AddAttention(enc, a, false, false);
      AddMlp(enc, a, false);
      std::vector<Linear> dec;
      AddAttention(dec, a, false, false);
      AddAttention(dec, a, false, false);
      AddMlp(dec, a, false);
      c.groups.push_back(Group(LayerRole::kT5Encoder, a.layers, std::move(enc), 2 * h));
      c.groups.push_back(Group(LayerRole::kT5Decoder, a.decoder_layers, std::move(dec), 3 * h));
      c.embedding = v * h;
      c.head = 2 * h + 2 * static_cast<u64>(a.rel_buckets) * static_cast<u64>(a.heads) +
               (a.tied_embeddings ? 0 : v * h);
      break;
    }
  }
  c.total = c.embedding + c.head + c.LayerParams();
  return c;
}

}  // namespace gp::size
