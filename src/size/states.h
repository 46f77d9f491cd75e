// Model states (weights, gradients, optimizer states) and temporary buffers for one GPU. Private to
// src/size/; estimate.cc assembles them with activations, the CUDA context and headroom.
#pragma once
#include <string>
#include <vector>

#include "size/estimate.h"

namespace gp::size {

// What one GPU of a pipeline stage holds before data-parallel sharding (after tensor parallelism).
struct Local {
  double params = 0;          // all parameters on the stage / tp
  double linear = 0;          // Linear weights of its layers / tp (what QLoRA stores in 4 bits)
  double trainable = 0;       // full: params; LoRA: the adapters
  double largest_layer = 0;   // one layer / tp
  double largest_linear = 0;  // one weight matrix / tp
  double layer_linear = 0;    // the Linear weights of the largest layer / tp
  double root = 0;            // embeddings and output layer on this stage / tp (FSDP's root unit)
  int layers = 0;
  bool first = true, last = true;
};

struct States {
  Term weights, gradients, optimizer;
  double host = 0;       // bytes moved to CPU RAM by offload
  double host_load = 0;  // CPU RAM while the model is built (DeepSpeed's estimators count it)
  double frozen = 0;     // LoRA / QLoRA: the frozen base weights on this GPU (in `weights`)
  std::string host_formula;
  double step_temp = 0;     // the optimizer step's full-size temporary (foreach AdamW), when there is one
  double weight_bytes = 2;  // bytes per parameter of the compute copy (FSDP units, ZeRO-3 gathers)
  double grad_bytes = 2;    // bytes per trainable parameter of the gradients (what a reduction moves)
  double grad_fp32 = 0;     // of `gradients`, DeepSpeed's fp32 copy (what ZeRO-Offload keeps on the CPU)
  std::vector<std::string> notes;
};

// `shard`: the group ZeRO/FSDP shards over.
States ModelStates(const Task& t, const Local& l, int shard);

// Communication and gather buffers alive during the backward pass, the FP8 and dequantized weight copies.
Term Buffers(const Task& t, const Local& l, const States& s, int shard, int dp);

}  // namespace gp::size
