// The traced forward pass (vision_graph.h). What each operation saves follows PyTorch's
// tools/autograd/derivatives.yaml; the precision of each tensor under autocast follows the op lists of
// aten/src/ATen/autocast_mode.cpp.
#include "size/vision_graph.h"

#include <algorithm>

namespace gp::size::vision {
namespace {

double OutSize(double in, int k, int stride, int pad) {
  return static_cast<double>(static_cast<long long>((in + 2 * pad - k) / stride) + 1);
}

}  // namespace

void Graph::Save(const Ten& t) {
  if (saved_ids_.insert(t.id).second) saved_ += t.Elems() * n_ * t.bytes;
}

Ten Graph::Low(const Ten& x) {
  if (amp_ == Amp::kNone || x.bytes == 2) return x;
  return Make(x.c, x.h, x.w, 2);
}

Ten Graph::Fp32(const Ten& x) {
  if (amp_ != Amp::kCuda || x.bytes == 4) return x;  // CPU autocast has no fp32 rule for layer_norm
  return Make(x.c, x.h, x.w, 4);
}

Ten Graph::Conv(const Ten& x, double cout, int k, int stride, int pad, double groups, bool bias) {
  Save(Low(x));
  Weights(cout * (x.c / groups) * k * k, bias ? cout : 0);
  return Make(cout, OutSize(x.h, k, stride, pad), OutSize(x.w, k, stride, pad), ActBytes());
}

Ten Graph::BatchNorm(const Ten& x) {
  Save(x);
  SaveRaw(2 * x.c * 4);  // save_mean, save_invstd
  Params(2 * x.c);
  return Make(x.c, x.h, x.w, x.bytes);
}

Ten Graph::ReluInPlace(const Ten& x) {
  Save(x);
  return x;
}

Ten Graph::Silu(const Ten& x) {
  Save(x);
  return Make(x.c, x.h, x.w, x.bytes);
}

Ten Graph::Gelu(const Ten& x) {
  Save(x);
  return Make(x.c, x.h, x.w, x.bytes);
}

Ten Graph::MaxPool(const Ten& x, int k, int stride, int pad) {
  Save(x);
  Ten out = Make(x.c, OutSize(x.h, k, stride, pad), OutSize(x.w, k, stride, pad), x.bytes);
  SaveRaw(out.Elems() * n_ * 8);  // int64 indices
  return out;
}

Ten Graph::AvgPoolAll(const Ten& x) {
  Save(x);
  return Make(x.c, 1, 1, x.bytes);
}

Ten Graph::LayerNorm(const Ten& x) {
  const Ten in = Fp32(x);
  Save(in);
  SaveRaw(2 * x.h * x.w * n_ * 4);  // mean, rstd per row
  Params(2 * x.c);
  return Make(x.c, x.h, x.w, in.bytes);
}

Ten Graph::Linear(const Ten& x, double out, bool bias) {
  Save(Low(x));
  Weights(out * x.c, bias ? out : 0);
  return Make(out, x.h, x.w, ActBytes());
}

Ten Graph::ScaleByParam(const Ten& x, double params) {
  Save(x);
  Params(params);
  return Make(x.c, x.h, x.w, 4);
}

Ten Graph::FusedAttention(const Ten& x, int heads) {
  const double d = x.c, s = x.h * x.w;
  const Ten proj = Linear(x, 3 * d, true);
  // The projection made contiguous once as (3, tokens, batch, d): q, k and v are views of that storage.
  const Ten qkv = Fresh(proj, 3 * d);
  Save(qkv);
  const Ten out = Make(d, x.h, x.w, ActBytes());
  Save(out);
  SaveRaw(n_ * heads * s * 4);  // the log-sum-exp of each query row, fp32
  // The kernel writes its output as (batch, tokens, heads, head dim), so permuted back to tokens first it is
  // already contiguous for one image: a copy only for more than one.
  const Ten o = n_ == 1 ? out : Fresh(out, d);
  return Linear(o, d, true);
}

Ten Graph::Attention(const Ten& x, int heads) {
  if (fused_attention_) return FusedAttention(x, heads);
  const double d = x.c, s = x.h * x.w;
  const Ten proj = Linear(x, 3 * d, true);
  // q, k, v are chunks of the projection, each made contiguous (a copy); q is then scaled (another).
  const Ten k = Fresh(proj, d), v = Fresh(proj, d), q = Fresh(proj, d);
  Save(Low(q));
  Save(Low(k));
  // Softmax keeps its output: under CUDA autocast in fp32 (its fp32 list), cast again for the second bmm.
  const Ten probs = Make(heads, s, s, amp_ == Amp::kCuda ? 4 : ActBytes());
  Save(probs);
  Save(Low(probs));
  Save(Low(v));
  const Ten o = Make(d, x.h, x.w, ActBytes());  // bmm output made contiguous for the output projection
  return Linear(o, d, true);
}

Ten Graph::PixelAttention(const Ten& qkv, int heads, double head_dim) {
  const double n = qkv.h * qkv.w;
  Save(Low(qkv));  // q and k (first product), v (second): views of one storage
  const Ten probs = Make(heads * n, n, 1, amp_ == Amp::kCuda ? 4 : ActBytes());
  Save(probs);
  Save(Low(probs));
  return Make(heads * head_dim, qkv.h, qkv.w, ActBytes());
}

void Graph::BeginBlock(const Ten& input) {
  block_start_ = saved_;
  inputs_ += input.Elems() * n_ * input.bytes;
  ++blocks_;
}

void Graph::EndBlock() {
  const double in_block = saved_ - block_start_;
  largest_ = std::max(largest_, in_block);
  in_blocks_ += in_block;
}

VisionCount Graph::Result() const {
  VisionCount r;
  r.known = true;
  r.saved = saved_;
  r.weight_casts = casts_;
  r.largest_block = largest_;
  r.block_inputs = inputs_;
  r.block_saved = in_blocks_;
  r.params = params_;
  r.blocks = blocks_;
  return r;
}

}  // namespace gp::size::vision
