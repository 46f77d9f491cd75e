// A recommender's embedding tables placed as TorchRec's planner places them (docs/size.md "Embedding
// tables"): sharded row-wise over the GPUs or placed whole on one GPU each (table-wise), in GPU memory or in
// host RAM with a cache in GPU memory (UVM caching). A plain value the estimate (a per-GPU term) and the
// host (RAM per server) share.
#pragma once
#include <string>
#include <vector>

#include "size/settings.h"
#include "size/task.h"

namespace gp::size {

struct EmbeddingPlacement {
  double rows_per_gpu = 0;     // the heaviest GPU's rows (row-wise: ceil(rows / GPUs) of every table)
  double table = 0;            // rows x dim x bytes, all tables
  double optimizer = 0;        // the optimizer's states of all tables
  double multiplier = 0;       // optimizer bytes per table byte (Adam 2, SGD 0, row-wise Adagrad 1 / dim)
  std::string optimizer_name;  // "adam", "row-wise adagrad", "sgd", "one state"
  double gpu_per_gpu = 0;      // GPU memory the heaviest GPU holds for the tables
  double host_per_gpu = 0;     // host RAM the heaviest GPU's tables hold (offloaded tables; 0 otherwise)
  std::vector<double> host_by_rank;  // host RAM each GPU's tables hold, by rank (offloaded; else empty)
  std::vector<int> rank_of_table;    // table-wise: the GPU each table is on (empty row-wise)
  std::string gpu_formula, host_formula;
  // Host RAM the heaviest server of `per_server` consecutive ranks holds.
  double HostPerServer(int per_server) const;
};

// Placement for t.gpus GPUs; all zero when the task has no tables.
EmbeddingPlacement PlaceEmbeddings(const Task& t);

// TorchRec's GreedyPerfPartitioner for table-wise shards (partitioners.py): tables by storage, largest first
// (ties in the given order), each onto the GPU with the least perf so far, ties by local rank
// (rank % local_world_size), then rank. Returns each table's rank. Storage limits are not applied: gpuprep
// sizes the GPUs to the placement.
struct TableLoad {
  double storage = 0, perf = 0;
};
std::vector<int> PartitionTableWise(const std::vector<TableLoad>& tables, int gpus, int local_world_size);

// --embedding-tables "45833188x128,36746x128x2": each table's rows, dimension and (optionally) bytes.
void ApplyEmbeddingTables(Task& t, const Setting& s);

extern const char* const kEmbeddingSource;

}  // namespace gp::size
