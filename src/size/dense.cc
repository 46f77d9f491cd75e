// CountDense and DenseActivations (dense.h). Per sample, with F tables of dimension D:
//   an MLP layer (TorchRec Perceptron: Linear with bias, then ReLU) of width w over an input of width n has
//     n x w + w parameters; the ReLU keeps its output (w values), which is also the next Linear's input; the
//     first Linear keeps the MLP's input (n values). The OverArch's last Linear has no ReLU: its output, the
//     logit, is kept by the loss with the label.
//   dot interaction (InteractionArch): no parameters; bmm keeps the stacked dense output and pooled
//     embeddings ((F + 1) x D values); the output is D + F(F + 1) / 2 (the upper triangle, concatenated
//     with the dense output), kept by the OverArch's first Linear.
//   DCN interaction (LowRankCrossNet over N = (F + 1) x D inputs, rank r): per layer W (N x r), V (r x N),
//     bias N; x_l (kept by V's linear), x_l V (r, kept by W's linear), and x_l W + b (N, kept by the product
//     with x_0): 2N + r values per layer.
#include "size/dense.h"

#include <numeric>

#include "size/format.h"

namespace gp::size {

const char* const kDenseSource =
    "pytorch/torchrec@a48cef79ebc333da92af1311c04b041ee21a8e75: torchrec/models/dlrm.py (DenseArch, "
    "InteractionArch: bmm and triu_indices(F + 1, F + 1, offset=1); DLRM_DCN: LowRankCrossNet over "
    "(F + 1) x D; OverArch: MLP then a final Linear), torchrec/modules/mlp.py (Perceptron: Linear with "
    "bias, ReLU), torchrec/modules/crossnet.py LowRankCrossNet.forward; layer sizes as "
    "mlcommons/training@aa344c7f recommendation_v2/torchrec_dlrm/dlrm_main.py takes them";

namespace {

// An MLP over `in` inputs: params and values kept per sample (its input included). `last_plain`: the last
// layer is a plain Linear whose output the loss keeps with the label (OverArch).
DensePart DenseMlp(const std::string& name, int in, const std::vector<int>& widths, bool last_plain) {
  DensePart p{name, 0, static_cast<double>(in), widths.empty() ? in : widths.back(), ""};
  std::string shape = std::to_string(in);
  int prev = in;
  for (int w : widths) {
    p.params += static_cast<uint64_t>(prev) * static_cast<uint64_t>(w) + static_cast<uint64_t>(w);
    p.saved += w;
    shape += " > " + std::to_string(w);
    prev = w;
  }
  if (last_plain) p.saved += 1;  // the label beside the logit
  p.formula = name + " " + shape + ": " + Count(static_cast<double>(p.params)) + " parameters, " +
              Count(p.saved) + " values kept per sample";
  return p;
}

DensePart DenseInteraction(const Task& t, int f, int d) {
  DensePart p;
  p.name = "interaction";
  const double n = static_cast<double>(f + 1) * d;
  if (!t.dense.dcn) {
    p.out = d + f * (f + 1) / 2;
    p.saved = n;
    p.formula = "dot interaction of " + std::to_string(f) + " tables + the dense output: (" +
                std::to_string(f) + " + 1) x " + std::to_string(d) + " values kept per sample, output " +
                std::to_string(d) + " + " + std::to_string(f) + " x " + std::to_string(f + 1) +
                " / 2 = " + std::to_string(p.out);
    return p;
  }
  const uint64_t in = static_cast<uint64_t>(f + 1) * static_cast<uint64_t>(d);
  const int l = t.dense.dcn_layers, r = t.dense.dcn_rank;
  p.out = static_cast<int>(in);
  p.params = static_cast<uint64_t>(l) * (2 * in * static_cast<uint64_t>(r) + in);
  p.saved = l * (2 * n + r);
  p.formula = "low-rank cross net over (" + std::to_string(f) + " + 1) x " + std::to_string(d) + " = " +
              std::to_string(in) + " inputs: " + std::to_string(l) + " layers x (2 x " + std::to_string(in) +
              " x rank " + std::to_string(r) + " + " + std::to_string(in) +
              ") = " + Count(static_cast<double>(p.params)) + " parameters, " + std::to_string(l) +
              " x (2 x " + std::to_string(in) + " + " + std::to_string(r) + ") values kept per sample";
  return p;
}

}  // namespace

DenseCounts CountDense(const Task& t) {
  DenseCounts c;
  if (t.dense.layers.empty() || t.embedding_tables.empty()) return c;
  const int f = static_cast<int>(t.embedding_tables.size()), d = t.embedding_tables.front().dim;
  c.parts.push_back(DenseMlp("dense arch", t.dense.features, t.dense.layers, false));
  c.parts.push_back(DenseInteraction(t, f, d));
  c.parts.push_back(DenseMlp("over arch", c.parts.back().out, t.dense.over, true));
  for (const auto& p : c.parts) {
    c.params += p.params;
    c.saved += p.saved;
  }
  return c;
}

ActivationEstimate DenseActivations(const Task& t) {
  ActivationEstimate r;
  const DenseCounts c = CountDense(t);
  const double e = t.precision == Precision::kFp32 ? 4 : 2;
  r.bytes = c.saved * e * t.micro_batch;
  r.per_layer = c.saved * e;
  r.formula = Count(c.saved) + " values kept per sample (";
  for (size_t i = 0; i < c.parts.size(); ++i) r.formula += (i ? "; " : "") + c.parts[i].formula;
  r.formula += ") x " + std::to_string(static_cast<int>(e)) + " B x micro-batch " +
               std::to_string(t.micro_batch) + " samples";
  return r;
}

}  // namespace gp::size
