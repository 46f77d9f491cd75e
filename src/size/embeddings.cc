// PlaceEmbeddings (embeddings.h): TorchRec's planner's storage estimate for row-wise or table-wise sharded
// tables, on the GPU or in host RAM with a GPU cache.
#include "size/embeddings.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "size/format.h"

namespace gp::size {

const char* const kEmbeddingSource =
    "pytorch/torchrec@a48cef79ebc333da92af1311c04b041ee21a8e75: "
    "torchrec/distributed/planner/shard_estimators.py calculate_shard_storages (UVM caching: GPU storage = "
    "round(host storage x caching_ratio)), _calculate_cache_aux_state_sizes (rows x (4 + clf x 16) bytes in "
    "GPU memory), _get_optimizer_multipler (Adam 2, SGD 0, RowWiseAdagrad 1 / dim, other optimizers 1); "
    "planner/constants.py UVM_CACHING_RATIO = 0.2; sharding_plan.py _calculate_rw_shard_sizes_and_offsets "
    "(each GPU takes ceil(rows / GPUs) rows); partitioners.py GreedyPerfPartitioner (table-wise: largest "
    "table first, onto the GPU with the least perf, ties by local rank then rank)";

namespace {

// Optimizer bytes per table byte, as TorchRec's planner counts them; by the dense optimizer when unset.
double Multiplier(const Task& t, int dim, int bytes, std::string* name) {
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
        return 2.0 / bytes;
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

// One GPU's share of the tables.
struct TableShare {
  double rows = 0, bytes = 0, opt = 0;
  int tables = 0;
  double Total() const { return bytes + opt; }
};

// GPU memory a shard takes: all of it, or (offloaded) the cache of it and the cache's state.
double GpuOf(const Task& t, const TableShare& s) {
  if (!t.embedding_offload) return s.Total();
  const double clf = t.embedding_cache_ratio;
  return std::round(s.Total() * clf) + std::ceil(s.rows * (4 + clf * 16));
}

std::string ShardText(const TableShare& s, const std::string& what, const std::string& name) {
  return what + " = " + Gb(s.bytes) + ", + " + name + " optimizer states " + Gb(s.opt) + " = " +
         Gb(s.Total());
}

void FinishPlacement(const Task& t, const TableShare& heavy, const std::string& text, EmbeddingPlacement& p) {
  p.rows_per_gpu = heavy.rows;
  const std::string where =
      t.embedding_sharding == EmbeddingSharding::kRowWise ? "row-wise shard" : "table-wise share";
  if (!t.embedding_offload) {
    p.gpu_formula = where + " in GPU memory: " + text;
    return;
  }
  const double clf = t.embedding_cache_ratio;
  p.host_formula = where + " in host RAM: " + text;
  p.gpu_formula = "GPU cache of the host-RAM " + where + ": " + Gb(heavy.Total()) + " x cache ratio " +
                  Bytes(clf) + " = " + Gb(std::round(heavy.Total() * clf)) + ", + cache state " +
                  Count(heavy.rows) + " rows x (4 + " + Bytes(clf) +
                  " x 16) B = " + Gb(std::ceil(heavy.rows * (4 + clf * 16)));
}

}  // namespace

double EmbeddingPlacement::HostPerServer(int per_server) const {
  double most = 0;
  if (per_server < 1) per_server = 1;
  for (size_t i = 0; i < host_by_rank.size(); i += static_cast<size_t>(per_server)) {
    double sum = 0;
    for (size_t j = i; j < host_by_rank.size() && j < i + static_cast<size_t>(per_server); ++j)
      sum += host_by_rank[j];
    most = std::max(most, sum);
  }
  return most;
}

std::vector<int> PartitionTableWise(const std::vector<TableLoad>& tables, int gpus, int local_world_size) {
  std::vector<size_t> order(tables.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tables[a].storage > tables[b].storage; });
  std::vector<double> perf(static_cast<size_t>(gpus), 0.0);
  std::vector<int> rank(tables.size(), 0);
  const int lws = std::max(1, local_world_size);
  for (size_t i : order) {
    int best = 0;
    for (int r = 1; r < gpus; ++r) {
      const auto key = [&](int x) { return std::make_tuple(perf[static_cast<size_t>(x)], x % lws, x); };
      if (key(r) < key(best)) best = r;
    }
    rank[i] = best;
    perf[static_cast<size_t>(best)] += tables[i].perf;
  }
  return rank;
}

namespace {

// Row-wise sharding: every GPU holds its share `rw` of every table's rows.
void PlaceEmbeddingsRowWise(const Task& t, const TableShare& rw, double rows, const std::string& name,
                            EmbeddingPlacement& p) {
  const size_t n = t.embedding_tables.size();
  const std::string dims = n == 1 ? std::to_string(t.embedding_tables[0].dim) : "dim";
  const std::string what = (n == 1 ? "" : std::to_string(n) + " tables, each ") + "ceil(" +
                           (n == 1 ? Count(rows) + " rows" : "rows") + " / " + std::to_string(t.gpus) +
                           " GPUs) x " + dims + " x bytes";
  p.gpu_per_gpu = GpuOf(t, rw);
  if (t.embedding_offload) {
    p.host_per_gpu = rw.Total();
    p.host_by_rank.assign(static_cast<size_t>(t.gpus), rw.Total());
  }
  FinishPlacement(t, rw, ShardText(rw, what, name), p);
}

// Table-wise sharding: each table whole (`full`) on the GPU the planner picks from the `loads`; the
// heaviest GPU is the figure.
void PlaceEmbeddingsTableWise(const Task& t, const std::vector<TableShare>& full,
                              const std::vector<TableLoad>& loads, const std::string& name,
                              EmbeddingPlacement& p) {
  const size_t n = t.embedding_tables.size();
  p.rank_of_table = PartitionTableWise(loads, t.gpus, t.c.gpus_per_node);
  std::vector<TableShare> by_rank(static_cast<size_t>(t.gpus));
  for (size_t i = 0; i < n; ++i) {
    TableShare& s = by_rank[static_cast<size_t>(p.rank_of_table[i])];
    s.rows += full[i].rows;
    s.bytes += full[i].bytes;
    s.opt += full[i].opt;
    s.tables += 1;
  }
  const TableShare* heavy = &by_rank.front();
  for (const TableShare& s : by_rank) {
    if (s.Total() > heavy->Total()) heavy = &s;
    p.gpu_per_gpu = std::max(p.gpu_per_gpu, GpuOf(t, s));
    if (t.embedding_offload) p.host_by_rank.push_back(s.Total());
  }
  if (t.embedding_offload) p.host_per_gpu = heavy->Total();
  const std::string what =
      "each table whole on one GPU, largest first onto the GPU with the least lookup work; "
      "the heaviest of " +
      std::to_string(t.gpus) + " GPUs holds " + std::to_string(heavy->tables) + " table(s), " +
      Count(heavy->rows) + " rows x dim x bytes";
  FinishPlacement(t, *heavy, ShardText(*heavy, what, name), p);
}

}  // namespace

EmbeddingPlacement PlaceEmbeddings(const Task& t) {
  EmbeddingPlacement p;
  if (t.embedding_tables.empty()) return p;
  const bool row_wise = t.embedding_sharding == EmbeddingSharding::kRowWise;
  std::string name;
  TableShare rw;  // row-wise: every GPU's share (ceil per table)
  std::vector<TableShare> full;
  std::vector<TableLoad> loads;
  double rows = 0;
  for (const auto& tab : t.embedding_tables) {
    const int b = tab.bytes > 0 ? tab.bytes : t.embedding_bytes;
    const double m = Multiplier(t, tab.dim, b, &name);
    const double r = static_cast<double>(tab.rows), per = std::ceil(r / t.gpus);
    rows += r;
    p.table += r * tab.dim * b;
    p.optimizer += r * tab.dim * b * m;
    rw.rows += per;
    rw.bytes += per * tab.dim * b;
    rw.opt += per * tab.dim * b * m;
    rw.tables += 1;
    full.push_back({r, r * tab.dim * b, r * tab.dim * b * m, 1});
    // The planner's perf of a table-wise shard grows with the bytes it looks up and sends per sample: its
    // dimension (the pooling factor, 1 by default, and the batch are the same for every table).
    loads.push_back({full.back().Total(), static_cast<double>(tab.dim)});
  }
  p.optimizer_name = name;
  p.multiplier = p.table > 0 ? p.optimizer / p.table : 0;
  if (row_wise)
    PlaceEmbeddingsRowWise(t, rw, rows, name, p);
  else
    PlaceEmbeddingsTableWise(t, full, loads, name, p);
  return p;
}

}  // namespace gp::size
