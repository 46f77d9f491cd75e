// A forward pass traced by shape only: each operation makes its output, adds the parameters it owns and
// records the tensors PyTorch's autograd saves for it (derivatives.yaml), each storage once, as
// torch.autograd.graph.saved_tensors_hooks sees them. Under autocast, an operation on the lower-precision
// list (convolution, linear, batched matmul) runs on a 16-bit copy of an fp32 input and saves that copy;
// one on CUDA's fp32 list (layer_norm, softmax, binary_cross_entropy_with_logits) saves an fp32 copy of a
// 16-bit input (PyTorch's CPU autocast has no such rule for them); the rest run in their input's precision,
// and a sum takes the wider of its operands' precisions. Private to src/size/vision*.cc.
#pragma once
#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "size/vision.h"

namespace gp::size::vision {

struct Ten {
  int id = 0;
  double c = 0, h = 0, w = 0;  // channels x height x width (tokens: c = width of a token, h = tokens)
  int bytes = 4;
  double Elems() const { return c * h * w; }
};

class Graph {
 public:
  Graph(double images, Amp amp, bool fused_attention = false)
      : n_(images), amp_(amp), fused_attention_(fused_attention) {}
  Ten Input(double c, double h, double w) { return Make(c, h, w, 4); }

  // Convolution (bias optional, groups) and batch norm (weight and bias; saves its input and two fp32
  // statistics per channel).
  Ten Conv(const Ten& x, double cout, int k, int stride, int pad, double groups, bool bias);
  Ten BatchNorm(const Ten& x);
  Ten ReluInPlace(const Ten& x);                          // saves its output, the same storage
  Ten Silu(const Ten& x);                                 // saves its input
  Ten Gelu(const Ten& x);                                 // saves its input
  Ten MaxPool(const Ten& x, int k, int stride, int pad);  // saves its input and int64 indices
  Ten AvgPoolAll(const Ten& x);                           // adaptive average pooling to 1x1: saves its input
  Ten Fresh(const Ten& like, double c) { return Make(c, like.h, like.w, like.bytes); }  // add, cat, copy
  Ten Add(const Ten& a, const Ten& b) { return Make(a.c, a.h, a.w, std::max(a.bytes, b.bytes)); }  // promotes
  Ten Upsample(const Ten& x, int f) { return Make(x.c, x.h * f, x.w * f, x.bytes); }  // nearest: no save
  // Over the last dimension (c): weight and bias; saves its input and two fp32 statistics per row.
  Ten LayerNorm(const Ten& x);
  Ten Linear(const Ten& x, double out, bool bias);  // on tokens x c
  // Multiplies by a parameter of `params` elements (ConvNeXt's layer scale): saves the tensor; the product
  // takes the parameter's fp32 precision.
  Ten ScaleByParam(const Ten& x, double params);
  // Self-attention as torch.nn.functional.multi_head_attention_forward computes it without weights asked
  // for: packed q/k/v projection, then either (fused) one scaled_dot_product_attention kernel, as PyTorch 2
  // runs it on a GPU (it keeps q, k, v, its output and a log-sum-exp per query row, no probabilities), or
  // (PyTorch 1.13) scaled q, softmax probabilities and two batched products; then the output projection.
  Ten Attention(const Ten& x, int heads);
  // Attention over the pixels of a feature map as Ultralytics' Attention (YOLO11's C2PSA) computes it:
  // q, k and v are views of `qkv` (per head: key_dim, key_dim, head_dim channels), q^T k is scaled, softmax'd
  // and multiplied into v with two batched products that save views of `qkv`, the probabilities (softmax
  // keeps its output: fp32 under CUDA autocast) and their 16-bit copy. Returns the product (heads x head_dim
  // channels).
  Ten PixelAttention(const Ten& qkv, int heads, double head_dim);
  // Saved bytes of another shape (noise masks, statistics), a new storage each time.
  void SaveRaw(double bytes) { saved_ += bytes; }
  double Images() const { return n_; }
  void AddParams(double n) { params_ += static_cast<uint64_t>(n); }  // parameters no op saves

  void BeginBlock(const Ten& input);
  void EndBlock();

  VisionCount Result() const;

 private:
  Ten Make(double c, double h, double w, int bytes) { return Ten{++next_, c, h, w, bytes}; }
  void Save(const Ten& t);
  Ten Low(const Ten& x);   // the lower-precision operand autocast gives a conv / linear / bmm
  Ten Fp32(const Ten& x);  // the fp32 operand autocast gives an fp32-list op
  int ActBytes() const { return amp_ == Amp::kNone ? 4 : 2; }
  // A weight and its bias: autocast casts both, but only the weight's copy is saved for backward.
  void Weights(double weight, double bias) {
    params_ += static_cast<uint64_t>(weight + bias);
    if (amp_ != Amp::kNone) casts_ += 2 * weight;
  }
  void Params(double n) { params_ += static_cast<uint64_t>(n); }

  Ten FusedAttention(const Ten& x, int heads);

  double n_;
  Amp amp_;
  bool fused_attention_;
  int next_ = 0;
  std::set<int> saved_ids_;
  double saved_ = 0, casts_ = 0;
  uint64_t params_ = 0;
  double block_start_ = -1, largest_ = 0, inputs_ = 0, in_blocks_ = 0;
  int blocks_ = 0;
};

}  // namespace gp::size::vision
