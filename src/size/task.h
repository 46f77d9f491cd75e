// A training task as a plain value: what `gpuprep size` is asked about. Built from flags or from a
// `kind: Task` document through settings.h (one code path for both), then passed to Estimate (estimate.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "size/host_ratios.h"
#include "size/model.h"

namespace gp::size {

enum class Method { kFull, kLora, kQlora };
enum class Precision { kFp32, kBf16Mixed, kFp16Mixed, kBf16Pure, kFp8 };
enum class Optimizer { kAdamW, kAdamW8bit, kSgd, kSgdMomentum };
enum class Offload { kNone, kOptimizer, kParams };
enum class Strategy { kDdp, kZero1, kZero2, kZero3, kFsdp, kFsdpGradOp, kFsdpHybrid };
enum class Checkpointing { kNone, kSelective, kFull };
enum class LossPrecision { kFp32, k16bit };  // the cross-entropy's log-probabilities and their gradients
// A recommender's embedding optimizer as TorchRec's planner counts its states (embeddings.h).
enum class EmbeddingOptimizer { kAdam, kRowWiseAdagrad, kSgd, kOneState };
// How TorchRec's planner splits the tables over the GPUs (embeddings.h): a slice of every table's rows on
// each GPU, or each table whole on one GPU.
enum class EmbeddingSharding { kRowWise, kTableWise };

const char* Name(Method m);
const char* Name(Precision p);
const char* Name(Optimizer o);
const char* Name(Offload o);
const char* Name(Strategy s);
const char* Name(Checkpointing c);
const char* Name(LossPrecision l);
const char* Name(EmbeddingOptimizer o);
const char* Name(EmbeddingSharding s);

bool IsDeepSpeed(Strategy s);  // zero1..zero3
bool IsFsdp(Strategy s);       // fsdp, fsdp-grad-op, fsdp-hybrid

struct Task;
// The loss's precision: as set, else 16-bit where the whole step runs in 16 bits (fp16 under DeepSpeed, whose
// engine casts the model and runs no autocast) or the loss is compiled, else fp32 (docs/size.md gives the
// rule and its sources).
LossPrecision LossPrecisionOf(const Task& t);

// Every constant the estimate uses, each settable (settings.h lists the keys and where defaults come from).
struct Constants {
  uint64_t cuda_context = 500000000;        // bytes per GPU outside the allocator (CUDA context, kernels)
  double headroom = 0.10;                   // fraction of the allocated subtotal kept free (fragmentation)
  int grad_bytes = 0;                       // 0: by strategy (DeepSpeed 2, DDP/FSDP 4 under mixed precision)
  uint64_t zero_reduce_bucket = 500000000;  // elements (DeepSpeed reduce_bucket_size default 5e8)
  uint64_t zero3_prefetch_bucket = 50000000;  // elements (stage3_prefetch_bucket_size default 5e7)
  bool ddp_bucket_view = false;   // DDP gradient_as_bucket_view (false: buckets copy the gradients)
  bool foreach_optimizer = true;  // PyTorch's default multi-tensor step (a full-size temporary);
                                  // false: fused or per-parameter steps (DeepSpeed: always false)
  // Multiplies the activation inventory: an allowance for temporaries and allocator rounding the inventory
  // does not itemise, set from tests/size/measured.h (docs/size.md: the BERT and LitGPT rows need at least
  // 1.11, the torchtune 3B row allows at most 1.27).
  double activation_factor = 1.15;
  bool zero_grad_set_to_none = true;  // optimizer.zero_grad frees gradients (PyTorch 2.0 and later)
  bool qlora_double_quant = true;     // QLoRA double quantization of the 4-bit block scales
  bool qlora_saves_inputs = false;    // bitsandbytes before its 2024 fix kept each 4-bit layer's input
  int lora_adapter_bytes = 4;         // PEFT keeps adapters in fp32 (autocast_adapter_dtype)
  double fp8_copy_bytes = 1.0;        // Transformer Engine's FP8 weight copies, per linear weight
  int gpus_per_node = 8;              // fsdp-hybrid shards within a node; DeepSpeed's host RAM per node
  // DeepSpeed's additional_buffer_factor: its estimators multiply the host RAM they count by it.
  double host_buffer_factor = 1.5;
};

// Where a value was written: a file position, or a flag (settings.h fills it in).
struct Origin {
  std::string file;  // display path; empty for a flag
  int line = 0, col = 0;
  std::string flag;
  std::string str() const;  // "task.yaml:4:7" or "--tp"
  // Throws gp::FileError at the position, gp::FlagError for a flag, a usage error otherwise.
  [[noreturn]] void Fail(const std::string& message) const;
};

struct Task {
  // The model: a table row, a Hugging Face config.json, or a bare parameter count.
  Architecture arch;
  std::string model_source;      // "table", "config FILE", "parameter count"
  std::string config_path;       // `config:` / --config, read by the caller (settings never read files)
  uint64_t params_override = 0;  // --params: used for the model states instead of the computed count

  Method method = Method::kFull;
  int lora_rank = 16;
  std::vector<std::string> lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
  Precision precision = Precision::kBf16Mixed;
  Optimizer optimizer = Optimizer::kAdamW;
  Offload offload = Offload::kNone;
  Strategy strategy = Strategy::kDdp;
  int tp = 1, pp = 1, gpus = 1;
  int seq = 2048, micro_batch = 1;
  // A vision network's task: the image size in pixels (0: the network's default, set by Finish) and the
  // images per optimizer step over all GPUs, as Ultralytics' `batch` (0: not given; then micro_batch is the
  // images per GPU). Finish sets micro_batch to batch / data-parallel GPUs.
  int image_h = 0, image_w = 0;
  int batch = 0;
  int grad_accumulation = 1;  // micro-batches per optimizer step
  Checkpointing checkpointing = Checkpointing::kNone;
  bool flash_attention = true;
  bool chunked_loss = false;
  std::optional<LossPrecision> loss_precision;  // unset: LossPrecisionOf's rule
  bool compile = false;     // torch.compile: fused element-wise chains are recomputed, not kept
  double lora_dropout = 0;  // dropout before the LoRA A matrix keeps a mask and its output
  double dropout = -1;      // < 0: by family (BERT and T5 train with 0.1, decoders with 0)
  uint64_t gpu_memory = 0;  // --gpu-memory: bytes per GPU; 0 = not asked

  // The host around the GPUs (host.h): the workload kind (unset: by the model's family), a recommender's
  // embedding tables (all tables together) and whether they live in host RAM, the disk a run needs.
  std::optional<WorkloadKind> workload;
  // The tables: rows of each (--embedding-rows 1e9, or one count per table), their dimension (one for all,
  // or one per table); CheckHost pairs them into embedding_tables.
  std::vector<uint64_t> embedding_rows;
  std::vector<int> embedding_dims;
  struct EmbeddingTable {
    uint64_t rows = 0;
    int dim = 0;
    int bytes = 0;  // bytes per value; 0: embedding_bytes
  };
  std::vector<EmbeddingTable> embedding_given;   // --embedding-tables: each table's rows, dim and bytes
  std::vector<EmbeddingTable> embedding_tables;  // the tables, from embedding_given or rows and dims
  EmbeddingSharding embedding_sharding = EmbeddingSharding::kRowWise;
  int embedding_bytes = 4;         // fp32 tables
  bool embedding_offload = false;  // tables in host RAM (UVM caching), a fraction cached in GPU memory
  std::optional<EmbeddingOptimizer> embedding_optimizer;  // unset: by the dense optimizer
  double embedding_cache_ratio = 0.2;  // TorchRec planner's UVM_CACHING_RATIO: the GPU cache's share
  // A recommender's dense part as TorchRec's DLRM builds it (dense.h); empty `layers`: not described.
  struct DenseArch {
    int features = 13;        // dense input features (Criteo's 13 integer features)
    std::vector<int> layers;  // DenseArch (bottom MLP) widths; the last is the embedding dimension
    std::vector<int> over;    // OverArch (top MLP) widths; the last is the output (1: a click logit)
    bool dcn = false;         // interaction: false: pairwise dot products (DLRM); true: low-rank cross net
    int dcn_layers = 3, dcn_rank = 512;  // TorchRec's dlrm_main defaults
  };
  DenseArch dense;
  // A model made of parts (multimodal.h): a vision encoder, a projector and the language model (`arch`), or
  // two contrastive towers. Empty `vision`: not a multimodal task.
  struct Multimodal {
    std::string preset;     // the preset it came from, if any
    std::string vision;     // a vision tower of multimodal.h
    std::string text;       // a contrastive text tower (CLIP); then there is no language model
    std::string projector;  // linear, mlp2x-gelu, ...; empty: none
    int image_tokens = 0;   // tokens each image adds to the language model's sequence
    std::map<std::string, Method> trained;  // part -> full or LoRA; a part not listed is frozen
  };
  Multimodal multimodal;
  int checkpoints_kept = 1;
  uint64_t dataset_bytes = 0;  // 0: not given

  Constants c;
  std::vector<std::string> notes;  // what the settings imply that the answer should say
  // Where each setting came from (keys of settings.h); absent: the default.
  std::map<std::string, Origin> origins;
};

// The images each GPU takes in a vision task: --batch over the GPUs (rounded up where a search for the
// smallest GPU count tries a count that does not divide it), else --micro-batch.
inline int ImagesPerGpu(const Task& t) {
  return t.batch > 0 ? (t.batch + t.gpus - 1) / t.gpus : t.micro_batch;
}

}  // namespace gp::size
