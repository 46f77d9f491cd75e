// ApplyDense and FinishDense (dense.h): the dense part's settings, validated where they enter, and the
// checks that need the embedding tables beside them.
#include <algorithm>

#include "size/dense.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {
namespace {

int DenseWhole(const Setting& s, const std::string& text, int lo, int hi) {
  const auto v = ParseUnsigned(text);
  if (!v || text.size() > 9 || *v < static_cast<uint64_t>(lo) || *v > static_cast<uint64_t>(hi))
    s.origin.Fail("expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                  ", got " + QuoteToken(text));
  return static_cast<int>(*v);
}

// "512,256,128": layer widths, 1 to 2^20 each, at most 64 layers.
std::vector<int> DenseWidths(const Setting& s) {
  std::vector<int> out;
  for (const std::string& part : Split(s.value, ',')) {
    if (out.size() == 64) s.origin.Fail("more than 64 layers");
    out.push_back(DenseWhole(s, std::string(Trim(part)), 1, 1 << 20));
  }
  if (out.empty()) s.origin.Fail("expected layer widths such as 512,256,128");
  return out;
}

const Origin& DenseAt(const Task& t, const std::string& key) {
  static const Origin kNone;
  auto it = t.origins.find(key);
  return it == t.origins.end() ? kNone : it->second;
}

bool DenseHas(const Task& t, const std::string& key) { return t.origins.count(key) > 0; }

const char* const kDenseKeys[] = {"recommender.dense_features", "recommender.over_layers",
                                  "recommender.interaction", "recommender.dcn_layers",
                                  "recommender.dcn_rank"};

// The tables meet the dense output in the interaction: one dimension for all, the dense arch's last width.
void CheckDenseTables(const Task& t) {
  const Origin& layers = DenseAt(t, "recommender.dense_layers");
  if (t.embedding_tables.empty())
    layers.Fail("the dense part meets the embedding tables: give --embedding-rows and --embedding-dim");
  const int d = t.embedding_tables.front().dim;
  for (const auto& tab : t.embedding_tables)
    if (tab.dim != d)
      DenseAt(t, "host.embedding_dim")
          .Fail("DLRM's interaction stacks every table with the dense output: one dimension for all tables");
  if (t.dense.layers.back() != d)
    layers.Fail("the last dense layer (" + std::to_string(t.dense.layers.back()) +
                ") must equal the embedding dimension (" + std::to_string(d) + ")");
}

}  // namespace

void ApplyDense(Task& t, const Setting& s) {
  const std::string& k = s.key;
  if (k == "recommender.dense_features")
    t.dense.features = DenseWhole(s, s.value, 1, 1000000);
  else if (k == "recommender.dense_layers")
    t.dense.layers = DenseWidths(s);
  else if (k == "recommender.over_layers")
    t.dense.over = DenseWidths(s);
  else if (k == "recommender.interaction") {
    if (s.value != "dot" && s.value != "dcn")
      s.origin.Fail("unknown value " + QuoteToken(s.value) + " (expected dot, dcn)");
    t.dense.dcn = s.value == "dcn";
  } else if (k == "recommender.dcn_layers")
    t.dense.dcn_layers = DenseWhole(s, s.value, 1, 64);
  else if (k == "recommender.dcn_rank")
    t.dense.dcn_rank = DenseWhole(s, s.value, 1, 65536);
  else
    s.origin.Fail("unknown setting " + QuoteToken(k));
}

void FinishDense(Task& t) {
  if (!DenseHas(t, "recommender.dense_layers")) {
    for (const char* k : kDenseKeys)
      if (DenseHas(t, k))
        DenseAt(t, k).Fail("describe the dense part first: --dense-layers and --over-layers");
    return;
  }
  const Origin& layers = DenseAt(t, "recommender.dense_layers");
  for (const char* k : {"model", "config", "params"})
    if (DenseHas(t, k))
      DenseAt(t, k).Fail("--dense-layers describes the model; drop --model, --config or --params");
  if (!DenseHas(t, "recommender.over_layers"))
    layers.Fail("--dense-layers needs --over-layers (the top MLP)");
  if (t.dense.over.size() < 2)
    DenseAt(t, "recommender.over_layers")
        .Fail("the over arch needs at least two layers (its last is the output)");
  if (!t.dense.dcn)
    for (const char* k : {"recommender.dcn_layers", "recommender.dcn_rank"})
      if (DenseHas(t, k)) DenseAt(t, k).Fail("the cross net's settings need --interaction dcn");
  for (const char* k :
       {"batch.seq", "flash_attention", "chunked_loss", "loss_precision", "compile", "dropout"})
    if (DenseHas(t, k))
      DenseAt(t, k).Fail(
          "a recommender has no sequence or attention: its batch is --micro-batch samples per GPU");
  if (t.tp > 1 || t.pp > 1)
    DenseAt(t, t.tp > 1 ? "parallel.tp" : "parallel.pp")
        .Fail("a recommender's dense part trains data parallel (tensor and pipeline parallelism: 1)");
  CheckDenseTables(t);
  Architecture& a = t.arch;
  a = Architecture{};
  a.name = t.dense.dcn ? "dlrm-dcn" : "dlrm";
  a.display = t.dense.dcn ? "DLRM-DCN" : "DLRM";
  a.source = "TorchRec's DLRM built from the dense layers given";
  t.model_source = "dense layers";
  t.params_override = CountDense(t).params;
  if (!DenseHas(t, "precision")) {
    t.precision = Precision::kFp32;
    t.notes.push_back("precision fp32, as TorchRec's DLRM trains (--precision)");
  }
}

}  // namespace gp::size
