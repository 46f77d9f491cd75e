// The answer: the GPU memory a training task needs per GPU, term by term, each with the formula it was
// computed by (numbers filled in) and the public source of that formula. A plain value, so the text and
// JSON renderers (render.h) and later callers (which servers fit, host RAM for offload) share it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "size/task.h"

namespace gp::size {

struct Term {
  std::string key;        // weights, gradients, optimizer, activations, buffers, cuda_context, headroom
  std::string label;      // "weights"
  double bytes = 0;       // per GPU
  std::string formula;    // how `bytes` was computed, with the task's numbers
  std::string source;     // the public source of the formula or constant
  bool estimated = true;  // false: not estimated; `bytes` is 0 and the total is a lower bound
};

// One part of a multimodal model (multimodal.h): what it holds on one GPU.
struct PartEstimate {
  std::string role;   // vision, projector, language, text
  std::string model;  // its display name
  uint64_t params = 0, trainable = 0;
  std::string train;       // frozen, full, lora
  double states = 0;       // weights + gradients + optimizer states per GPU
  double activations = 0;  // per GPU
};

struct Estimate {
  std::string model;             // the architecture's display name
  uint64_t params = 0;           // all parameters of the model
  uint64_t trainable = 0;        // trainable parameters (LoRA: the adapters)
  uint64_t params_per_gpu = 0;   // parameters this GPU holds before data-parallel sharding (after TP/PP)
  double trainable_per_gpu = 0;  // trainable parameters of that share (LoRA: its adapters)
  double gather_bytes = 2;  // bytes per parameter ZeRO-3/FSDP gather (the compute copy: 2, NF4 ~0.52, fp32 4)
  double grad_bytes = 2;    // bytes per trainable parameter a gradient reduction moves
  int gpus = 1, dp = 1, shard = 1;  // GPUs, data-parallel degree, the group ZeRO/FSDP shards over
  std::vector<Term> terms;          // in the order of the keys above (QLoRA: `load` after `phases`)
  double allocated = 0;             // weights + gradients + optimizer + activations + buffers
  double per_gpu = 0;               // allocated + CUDA context + headroom
  double total = 0;                 // per_gpu * gpus
  double host_per_gpu = 0;          // CPU RAM per GPU: offloaded states (DeepSpeed: its estimators' figure)
  std::string host_formula;         // how host_per_gpu was computed
  double host_embeddings_per_gpu = 0;  // of host_per_gpu: a recommender's offloaded tables (embeddings.h)
  bool lower_bound = false;            // some term was not estimated
  std::vector<PartEstimate> parts;     // a multimodal model's parts; empty otherwise
  std::vector<std::string> notes;

  const Term* Find(const std::string& key) const;
};

// Throws gp::Error (exit 2) for combinations that cannot run (offload the strategy lacks, a GPU count that
// the parallel degrees do not divide, MoE).
Estimate EstimateTask(const Task& t);

// The smallest GPU count (a multiple of tp*pp) whose per-GPU need fits `gpu_memory` bytes, searching up to
// 65536 GPUs; nullopt when none does (DDP replicates everything, so more GPUs never help it).
struct Fit {
  int gpus = 0;
  Estimate at;
};
std::optional<Fit> SmallestFit(Task t, uint64_t gpu_memory);

}  // namespace gp::size
