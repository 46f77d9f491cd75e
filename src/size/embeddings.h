// A recommender's embedding tables placed as TorchRec's planner places them (docs/size.md "Embedding
// tables"): sharded row-wise over the GPUs in GPU memory, or in host RAM with a cache in GPU memory
// (UVM caching). A plain value the estimate (a per-GPU term) and the host (RAM per server) share.
#pragma once
#include <string>

#include "size/task.h"

namespace gp::size {

struct EmbeddingPlacement {
  double rows_per_gpu = 0;     // each GPU's row-wise shard: ceil(rows / GPUs) of every table
  double table = 0;            // rows x dim x bytes, all tables
  double optimizer = 0;        // the optimizer's states of all tables
  double multiplier = 0;       // optimizer bytes per table byte (Adam 2, SGD 0, row-wise Adagrad 1 / dim)
  std::string optimizer_name;  // "adam", "row-wise adagrad", "sgd", "one state"
  double gpu_per_gpu = 0;      // GPU memory each GPU holds for the tables
  double host_per_gpu = 0;     // host RAM each GPU's shard holds (offloaded tables; 0 otherwise)
  std::string gpu_formula, host_formula;
};

// Placement for t.gpus GPUs; all zero when the task has no tables.
EmbeddingPlacement PlaceEmbeddings(const Task& t);

extern const char* const kEmbeddingSource;

}  // namespace gp::size
