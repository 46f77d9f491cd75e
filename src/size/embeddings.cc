// PlaceEmbeddings (embeddings.h): TorchRec's planner's storage estimate for row-wise sharded tables, on the
// GPU or in host RAM with a GPU cache.
#include "size/embeddings.h"

#include <cmath>

#include "size/format.h"

namespace gp::size {

const char* const kEmbeddingSource =
    "pytorch/torchrec@a48cef79ebc333da92af1311c04b041ee21a8e75: "
    "torchrec/distributed/planner/shard_estimators.py calculate_shard_storages (UVM caching: GPU storage = "
    "round(host storage x caching_ratio)), _calculate_cache_aux_state_sizes (rows x (4 + clf x 16) bytes in "
    "GPU memory), _get_optimizer_multipler (Adam 2, SGD 0, RowWiseAdagrad 1 / dim, other optimizers 1); "
    "planner/constants.py UVM_CACHING_RATIO = 0.2; sharding_plan.py _calculate_rw_shard_sizes_and_offsets "
    "(each GPU takes ceil(rows / GPUs) rows)";

namespace {

// Optimizer bytes per table byte, as TorchRec's planner counts them; by the dense optimizer when unset.
double Multiplier(const Task& t, int dim, std::string* name) {
  EmbeddingOptimizer o = EmbeddingOptimizer::kOneState;
  if (t.embedding_optimizer) {
    o = *t.embedding_optimizer;
  } else {
    switch (t.optimizer) {
      case Optimizer::kAdamW:
        o = EmbeddingOptimizer::kAdam;
        break;
      case Optimizer::kSgd:
        o = EmbeddingOptimizer::kSgd;
        break;
      case Optimizer::kSgdMomentum:
        o = EmbeddingOptimizer::kOneState;
        break;
      case Optimizer::kAdamW8bit:
        *name = "8-bit adam (2 bytes per value)";
        return 2.0 / t.embedding_bytes;
    }
  }
  *name = Name(o);
  switch (o) {
    case EmbeddingOptimizer::kAdam:
      return 2;
    case EmbeddingOptimizer::kSgd:
      return 0;
    case EmbeddingOptimizer::kRowWiseAdagrad:
      return 1.0 / dim;
    case EmbeddingOptimizer::kOneState:
      return 1;
  }
  return 1;
}

}  // namespace

EmbeddingPlacement PlaceEmbeddings(const Task& t) {
  EmbeddingPlacement p;
  if (t.embedding_tables.empty()) return p;
  const double b = t.embedding_bytes;
  double rows = 0, shard_rows = 0, shard_bytes = 0;
  for (const auto& tab : t.embedding_tables) {
    const double r = static_cast<double>(tab.rows), per = std::ceil(r / t.gpus);
    rows += r;
    p.table += r * tab.dim * b;
    shard_rows += per;
    shard_bytes += per * tab.dim * b;
  }
  // Row-wise Adagrad keeps one value per row: 1 / dim of each table, summed per table.
  std::string name;
  double opt_all = 0, opt_shard = 0;
  for (const auto& tab : t.embedding_tables) {
    const double m = Multiplier(t, tab.dim, &name);
    const double r = static_cast<double>(tab.rows);
    opt_all += r * tab.dim * b * m;
    opt_shard += std::ceil(r / t.gpus) * tab.dim * b * m;
  }
  p.optimizer_name = name;
  p.optimizer = opt_all;
  p.multiplier = p.table > 0 ? opt_all / p.table : 0;
  p.rows_per_gpu = shard_rows;
  const double shard = shard_bytes + opt_shard;
  const size_t n = t.embedding_tables.size();
  const std::string dims = n == 1 ? std::to_string(t.embedding_tables[0].dim) : "dim";
  const std::string shard_text = (n == 1 ? "" : std::to_string(n) + " tables, each ") + "ceil(" +
                                 (n == 1 ? Count(rows) + " rows" : "rows") + " / " + std::to_string(t.gpus) +
                                 " GPUs) x " + dims + " x " + std::to_string(t.embedding_bytes) +
                                 " B = " + Gb(shard_bytes) + ", + " + p.optimizer_name +
                                 " optimizer states " + Gb(opt_shard);
  if (!t.embedding_offload) {
    p.gpu_per_gpu = shard;
    p.gpu_formula = "row-wise shard in GPU memory: " + shard_text + " = " + Gb(shard);
    return p;
  }
  const double clf = t.embedding_cache_ratio;
  const double cache = std::round(shard * clf);
  const double aux = std::ceil(shard_rows * (4 + clf * 16));
  p.host_per_gpu = shard;
  p.gpu_per_gpu = cache + aux;
  p.host_formula = "row-wise shard in host RAM: " + shard_text + " = " + Gb(shard);
  p.gpu_formula = "GPU cache of the host-RAM shard: " + Gb(shard) + " x cache ratio " + Bytes(clf) + " = " +
                  Gb(cache) + ", + cache state " + Count(shard_rows) + " rows x (4 + " + Bytes(clf) +
                  " x 16) B = " + Gb(aux);
  return p;
}

}  // namespace gp::size
