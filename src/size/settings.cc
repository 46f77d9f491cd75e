// Setting keys and their values (settings.h). Values arrive as text from flags or a Task document; each is
// parsed and range-checked here, and every error is reported at the value's origin.
#include "size/settings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "size/dense.h"
#include "size/embeddings.h"
#include "size/multimodal.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {
namespace {

template <typename E>
struct Choice {
  const char* name;
  E value;
};

template <typename E, size_t N>
E Pick(const Setting& s, const Choice<E> (&choices)[N]) {
  std::vector<std::string> names;
  for (const auto& c : choices) {
    if (s.value == c.name) return c.value;
    names.push_back(c.name);
  }
  std::string msg = "unknown value " + QuoteToken(s.value);
  if (auto guess = DidYouMean(s.value, names))
    msg += " (did you mean \"" + *guess + "\"?)";
  else
    msg += " (expected " + Join(names, ", ") + ")";
  s.origin.Fail(msg);
}

long long Int(const Setting& s, long long lo, long long hi) {
  auto v = ParseUnsigned(s.value);
  if (!v || s.value.size() > 19) s.origin.Fail("expected a whole number, got " + QuoteToken(s.value));
  const auto n = static_cast<long long>(*v);
  if (n < lo || n > hi)
    s.origin.Fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                  s.value);
  return n;
}

// "640", "640x480" or "640,480" (a document's list): height and width, each 32 to 16384 pixels.
void ImageSize(Task& t, const Setting& s) {
  const std::string& v = s.value;
  const size_t sep = v.find_first_of("x,");
  Setting h = s, w = s;
  h.value = v.substr(0, sep);
  w.value = sep == std::string::npos ? h.value : v.substr(sep + 1);
  t.image_h = static_cast<int>(Int(h, 32, 16384));
  t.image_w = static_cast<int>(Int(w, 32, 16384));
}

double Real(const Setting& s, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(s.value.c_str(), &end);
  if (s.value.empty() || end != s.value.c_str() + s.value.size() || !std::isfinite(v))
    s.origin.Fail("expected a number, got " + QuoteToken(s.value));
  if (v < lo || v > hi) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "must be between %g and %g, got ", lo, hi);
    s.origin.Fail(buf + s.value);
  }
  return v;
}

bool Bool(const Setting& s) {
  if (s.value == "true") return true;
  if (s.value == "false") return false;
  s.origin.Fail("expected true or false, got " + QuoteToken(s.value));
}

// "10%" or "0.1".
double Fraction(const Setting& s) {
  if (EndsWith(s.value, "%")) {
    Setting pct = s;
    pct.value = s.value.substr(0, s.value.size() - 1);
    return Real(pct, 0, 90) / 100;
  }
  return Real(s, 0, 0.9);
}

std::vector<std::string> Targets(const Setting& s) {
  static const std::vector<std::pair<std::string, std::string>> kAlias = {
      {"q_proj", "q"},       {"k_proj", "k"},   {"v_proj", "v"},       {"o_proj", "o"}, {"output_proj", "o"},
      {"gate_proj", "gate"}, {"up_proj", "up"}, {"down_proj", "down"}, {"query", "q"},  {"key", "k"},
      {"value", "v"},        {"wi_0", "gate"},  {"wi_1", "up"},        {"wi", "up"},    {"wo", "down"},
      {"w1", "gate"},        {"w3", "up"},      {"w2", "down"}};
  const std::vector<std::string> order = {"q", "k", "v", "o", "gate", "up", "down"};
  std::vector<std::string> picked;
  for (std::string name : Split(s.value, ',')) {
    name = std::string(Trim(name));
    std::vector<std::string> add;
    if (name == "all" || name == "all-linear")
      add = order;
    else if (name == "attention")
      add = {"q", "k", "v", "o"};
    else if (name == "mlp")
      add = {"gate", "up", "down"};
    else if (std::find(order.begin(), order.end(), name) != order.end())
      add = {name};
    else {
      auto it = std::find_if(kAlias.begin(), kAlias.end(), [&](const auto& a) { return a.first == name; });
      if (it == kAlias.end()) {
        std::vector<std::string> known = order;
        known.insert(known.end(), {"all", "attention", "mlp"});
        std::string msg = "unknown LoRA target " + QuoteToken(name);
        if (auto guess = DidYouMean(name, known))
          msg += " (did you mean \"" + *guess + "\"?)";
        else
          msg += " (targets: " + Join(known, ", ") + ")";
        s.origin.Fail(msg);
      }
      add = {it->second};
    }
    for (const auto& a : add)
      if (std::find(picked.begin(), picked.end(), a) == picked.end()) picked.push_back(a);
  }
  if (picked.empty()) s.origin.Fail("name at least one LoRA target");
  std::vector<std::string> sorted;
  for (const auto& o : order)
    if (std::find(picked.begin(), picked.end(), o) != picked.end()) sorted.push_back(o);
  return sorted;
}

bool MoeName(const std::string& name) {
  const std::string n = ToLower(name);
  return n.find("mixtral") != std::string::npos || n.find("moe") != std::string::npos ||
         n.find("deepseek-v") != std::string::npos || n.find("8x7b") != std::string::npos ||
         n.find("8x22b") != std::string::npos;
}

void Model(Task& t, const Setting& s) {
  if (MoeName(s.value))
    s.origin.Fail(QuoteToken(s.value) +
                  " is a mixture-of-experts model; gpuprep size models dense models only");
  const Architecture* a = FindModel(s.value);
  if (!a) {
    std::string msg = "unknown model " + QuoteToken(s.value);
    if (auto guess = DidYouMean(ToLower(s.value), ModelNames()))
      msg += " (did you mean \"" + *guess + "\"?)";
    else
      msg += " (gpuprep size --list-models shows the table; --config FILE reads a config.json)";
    s.origin.Fail(msg);
  }
  t.arch = *a;
  t.model_source = "table";
}

int TwoOrFour(const Setting& s) {
  const auto n = static_cast<int>(Int(s, 2, 4));
  if (n == 3) s.origin.Fail("must be 2 or 4, got 3");
  return n;
}

// How each setting is read, one small function or template per kind of value; the table below names the
// one each key uses.
template <int Task::*F, long long Lo, long long Hi>
void IntField(Task& t, const Setting& s) {
  t.*F = static_cast<int>(Int(s, Lo, Hi));
}

template <int Architecture::*F, long long Hi>
void ArchDim(Task& t, const Setting& s) {
  t.arch.*F = static_cast<int>(Int(s, 1, Hi));
}

template <bool Task::*F>
void BoolField(Task& t, const Setting& s) {
  t.*F = Bool(s);
}

template <bool Constants::*F>
void ConstantFlag(Task& t, const Setting& s) {
  t.c.*F = Bool(s);
}

template <int Constants::*F>
void ConstantTwoOrFour(Task& t, const Setting& s) {
  t.c.*F = TwoOrFour(s);
}

template <uint64_t Constants::*F>
void ConstantElements(Task& t, const Setting& s) {
  if (!ParseCount(s.value, &(t.c.*F)))
    s.origin.Fail("expected a number of elements such as 5e8, got " + QuoteToken(s.value));
}

void ReadConfigPath(Task& t, const Setting& s) {
  if (s.value.empty()) s.origin.Fail("empty path");
  t.config_path = s.value;
}

void ParamCount(Task& t, const Setting& s) {
  if (!ParseCount(s.value, &t.params_override))
    s.origin.Fail("expected a parameter count such as 7e9, 7.5B or 6738415616, got " + QuoteToken(s.value));
}

void ArchTied(Task& t, const Setting& s) { t.arch.tied_embeddings = Bool(s); }

void Experts(Task&, const Setting& s) {
  if (Int(s, 1, 1 << 16) > 1)
    s.origin.Fail(
        "mixture-of-experts models are not modelled (expert parallelism and routing change every term)");
}

void MethodOf(Task& t, const Setting& s) {
  t.method =
      Pick(s, {Choice<Method>{"full", Method::kFull}, {"lora", Method::kLora}, {"qlora", Method::kQlora}});
}

void LoraTargets(Task& t, const Setting& s) { t.lora_targets = Targets(s); }
void LoraDropoutValue(Task& t, const Setting& s) { t.lora_dropout = Real(s, 0, 0.9); }

void PrecisionOf(Task& t, const Setting& s) {
  t.precision = Pick(s, {Choice<Precision>{"fp32", Precision::kFp32},
                         {"bf16-mixed", Precision::kBf16Mixed},
                         {"fp16-mixed", Precision::kFp16Mixed},
                         {"bf16-pure", Precision::kBf16Pure},
                         {"fp8", Precision::kFp8}});
}

void OptimizerOf(Task& t, const Setting& s) {
  t.optimizer = Pick(s, {Choice<Optimizer>{"adamw", Optimizer::kAdamW},
                         {"adamw-8bit", Optimizer::kAdamW8bit},
                         {"sgd", Optimizer::kSgd},
                         {"sgd-momentum", Optimizer::kSgdMomentum}});
}

void OffloadOf(Task& t, const Setting& s) {
  t.offload = Pick(s, {Choice<Offload>{"none", Offload::kNone},
                       {"optimizer", Offload::kOptimizer},
                       {"params", Offload::kParams}});
}

void StrategyOf(Task& t, const Setting& s) {
  t.strategy = Pick(s, {Choice<Strategy>{"ddp", Strategy::kDdp},
                        {"zero1", Strategy::kZero1},
                        {"zero2", Strategy::kZero2},
                        {"zero3", Strategy::kZero3},
                        {"fsdp", Strategy::kFsdp},
                        {"fsdp-grad-op", Strategy::kFsdpGradOp},
                        {"fsdp-hybrid", Strategy::kFsdpHybrid}});
}

void ContextParallel(Task&, const Setting& s) {
  if (Int(s, 1, 1024) > 1)
    s.origin.Fail(
        "context parallelism is not modelled (it splits the sequence, and the attention's "
        "communication buffers with it)");
}

void GpusPerNode(Task& t, const Setting& s) { t.c.gpus_per_node = static_cast<int>(Int(s, 1, 1024)); }

void CheckpointingOf(Task& t, const Setting& s) {
  t.checkpointing = Pick(s, {Choice<Checkpointing>{"none", Checkpointing::kNone},
                             {"selective", Checkpointing::kSelective},
                             {"full", Checkpointing::kFull}});
}

void LossPrecisionChoice(Task& t, const Setting& s) {
  t.loss_precision =
      Pick(s, {Choice<LossPrecision>{"fp32", LossPrecision::kFp32}, {"16bit", LossPrecision::k16bit}});
}

void Dropout(Task& t, const Setting& s) { t.dropout = Real(s, 0, 0.9); }

void GpuMemorySize(Task& t, const Setting& s) {
  if (!ParseSize(s.value, &t.gpu_memory) || t.gpu_memory < 1000000)
    s.origin.Fail("expected a GPU memory size such as 80GB or 81559MiB, got " + QuoteToken(s.value) +
                  BareUnitHint(s.value));
}

void Workload(Task& t, const Setting& s) {
  t.workload = Pick(s, {Choice<WorkloadKind>{"llm", WorkloadKind::kLlm},
                        {"vision", WorkloadKind::kVision},
                        {"recommender", WorkloadKind::kRecommender},
                        {"multimodal", WorkloadKind::kMultimodal}});
}

void EmbeddingRows(Task& t, const Setting& s) {
  t.embedding_rows.clear();
  for (const std::string& part : Split(s.value, ',')) {
    uint64_t rows = 0;
    if (!ParseCount(std::string(Trim(part)), &rows) || rows == 0)
      s.origin.Fail("expected row counts such as 1e9 or 50M (one per table, commas between), got " +
                    QuoteToken(s.value));
    t.embedding_rows.push_back(rows);
  }
}

void EmbeddingDims(Task& t, const Setting& s) {
  t.embedding_dims.clear();
  for (const std::string& part : Split(s.value, ',')) {
    Setting one = s;
    one.value = std::string(Trim(part));
    t.embedding_dims.push_back(static_cast<int>(Int(one, 1, 65536)));
  }
}

void EmbeddingBytes(Task& t, const Setting& s) { t.embedding_bytes = TwoOrFour(s); }

void EmbeddingOptimizerOf(Task& t, const Setting& s) {
  t.embedding_optimizer = Pick(s, {Choice<EmbeddingOptimizer>{"adam", EmbeddingOptimizer::kAdam},
                                   {"rowwise-adagrad", EmbeddingOptimizer::kRowWiseAdagrad},
                                   {"sgd", EmbeddingOptimizer::kSgd},
                                   {"one-state", EmbeddingOptimizer::kOneState}});
}

void EmbeddingShardingOf(Task& t, const Setting& s) {
  t.embedding_sharding = Pick(s, {Choice<EmbeddingSharding>{"row", EmbeddingSharding::kRowWise},
                                  {"table", EmbeddingSharding::kTableWise}});
}

void EmbeddingCacheRatio(Task& t, const Setting& s) { t.embedding_cache_ratio = Real(s, 0.01, 1); }

void DatasetSize(Task& t, const Setting& s) {
  uint64_t n = 0;
  if (!ParseSize(s.value, &n) || n > (uint64_t{1} << 60))
    s.origin.Fail("expected a size such as 500GB or 2TB, got " + QuoteToken(s.value) + BareUnitHint(s.value));
  t.dataset_bytes = n;
}

void CudaContext(Task& t, const Setting& s) {
  uint64_t n = 0;
  if (!ParseSize(s.value, &n) || n > (uint64_t{1} << 40))
    s.origin.Fail("expected a size such as 0.5GB or 512MiB, got " + QuoteToken(s.value) +
                  BareUnitHint(s.value));
  t.c.cuda_context = n;
}

void Headroom(Task& t, const Setting& s) { t.c.headroom = Fraction(s); }
void ActivationFactor(Task& t, const Setting& s) { t.c.activation_factor = Real(s, 0.5, 4); }
void Fp8CopyBytes(Task& t, const Setting& s) { t.c.fp8_copy_bytes = Real(s, 0, 4); }
void HostBufferFactor(Task& t, const Setting& s) { t.c.host_buffer_factor = Real(s, 1, 4); }

// Every setting: its document path, its flag, its help, whether the flag may stand alone, and how its
// value is read.
const std::vector<KeyInfo> kKeys = {
    {"model", "--model", "A model from the shipped table (gpuprep size --list-models)", false, Model},
    {"config", "--config", "A Hugging Face config.json describing the model", false, ReadConfigPath},
    {"params", "--params", "A bare parameter count (7e9, 7.5B, 350M) instead of a model", false, ParamCount},
    {"architecture.layers", "--layers", "With --params: transformer layers", false,
     ArchDim<&Architecture::layers, 10000>},
    {"architecture.hidden", "--hidden", "With --params: hidden size", false,
     ArchDim<&Architecture::hidden, 1 << 20>},
    {"architecture.heads", "--heads", "With --params: attention heads", false,
     ArchDim<&Architecture::heads, 1 << 16>},
    {"architecture.kv_heads", "--kv-heads", "With --params: key/value heads (grouped-query attention)", false,
     ArchDim<&Architecture::kv_heads, 1 << 16>},
    {"architecture.ffn", "--ffn", "With --params: MLP inner size", false,
     ArchDim<&Architecture::ffn, 1 << 22>},
    {"architecture.vocab", "--vocab", "With --params: vocabulary size", false,
     ArchDim<&Architecture::vocab, 1 << 24>},
    {"architecture.tied_embeddings", "--tied-embeddings", "With --params: input and output embeddings shared",
     true, ArchTied},
    {"architecture.experts", "--experts", "Experts per MoE layer (mixture-of-experts is not modelled)", false,
     Experts},
    {"method", "--method", "full | lora | qlora", false, MethodOf},
    {"lora.rank", "--lora-rank", "LoRA rank r (default 16)", false, IntField<&Task::lora_rank, 1, 65536>},
    {"lora.targets", "--lora-targets", "q,k,v,o,gate,up,down, or all, attention, mlp (default all)", false,
     LoraTargets},
    {"lora.dropout", "--lora-dropout", "Dropout before the LoRA A matrix (default 0)", false,
     LoraDropoutValue},
    {"precision", "--precision", "fp32 | bf16-mixed | fp16-mixed | bf16-pure | fp8", false, PrecisionOf},
    {"optimizer", "--optimizer", "adamw | adamw-8bit | sgd | sgd-momentum", false, OptimizerOf},
    {"offload", "--offload", "none | optimizer | params (states to CPU RAM)", false, OffloadOf},
    {"parallel.strategy", "--parallel", "ddp | zero1 | zero2 | zero3 | fsdp | fsdp-grad-op | fsdp-hybrid",
     false, StrategyOf},
    {"parallel.gpus", "--gpus", "GPUs in all (default 1)", false, IntField<&Task::gpus, 1, 65536>},
    {"parallel.tp", "--tp", "Tensor-parallel degree (default 1)", false, IntField<&Task::tp, 1, 1024>},
    {"parallel.pp", "--pp", "Pipeline-parallel degree (default 1)", false, IntField<&Task::pp, 1, 1024>},
    {"parallel.cp", "--cp", "Context-parallel degree (only 1: context parallelism is not modelled)", false,
     ContextParallel},
    {"parallel.gpus_per_node", "--gpus-per-node", "GPUs per node, for fsdp-hybrid (default 8)", false,
     GpusPerNode},
    {"batch.seq", "--seq", "Sequence length in tokens (default 2048)", false,
     IntField<&Task::seq, 1, 10000000>},
    {"batch.micro_batch", "--micro-batch", "Sequences per GPU per forward pass (default 1)", false,
     IntField<&Task::micro_batch, 1, 100000>},
    {"batch.grad_accumulation", "--grad-accumulation", "Micro-batches per optimizer step (default 1)", false,
     IntField<&Task::grad_accumulation, 1, 1000000>},
    {"batch.image_size", "--image-size",
     "Vision: image size in pixels, 640 or HEIGHTxWIDTH (default: 640 for YOLO, 224 for the classifiers)",
     false, ImageSize},
    {"batch.images", "--batch",
     "Vision: images per step over all GPUs, as Ultralytics' batch (per GPU: batch / GPUs; not with "
     "--micro-batch)",
     false, IntField<&Task::batch, 1, 1000000>},
    {"grad_checkpointing", "--grad-checkpointing", "none | selective | full (default none)", false,
     CheckpointingOf},
    {"flash_attention", "--flash-attention", "Fused attention that keeps no probabilities (default true)",
     true, BoolField<&Task::flash_attention>},
    {"chunked_loss", "--chunked-loss", "Cross-entropy computed in chunks (default false)", true,
     BoolField<&Task::chunked_loss>},
    {"compile", "--compile", "torch.compile of the model and loss (default false)", true,
     BoolField<&Task::compile>},
    {"loss_precision", "--loss-precision",
     "fp32 | 16bit: the cross-entropy's log-probabilities (default: 16bit for fp16 under DeepSpeed and "
     "with --compile, else fp32)",
     false, LossPrecisionChoice},
    {"dropout", "--dropout", "Dropout probability (default: 0.1 for BERT and T5, 0 for decoders)", false,
     Dropout},
    {"gpu_memory", "--gpu-memory", "Memory of one GPU (80GB, 81559MiB): answers the smallest GPU count",
     false, GpuMemorySize},
    {"host.workload", "--workload",
     "llm | vision | recommender | multimodal: CPU cores per GPU (default: by model)", false, Workload},
    {"host.embedding_rows", "--embedding-rows",
     "Recommender: rows of the embedding tables (1e9, 50M), or of each table (commas between)", false,
     EmbeddingRows},
    {"host.embedding_dim", "--embedding-dim",
     "Recommender: embedding dimension, one for all tables or one per table (commas between)", false,
     EmbeddingDims},
    {"host.embedding_bytes", "--embedding-bytes",
     "Recommender: bytes per embedding value, 2 or 4 (default 4)", false, EmbeddingBytes},
    {"host.embedding_offload", "--embedding-offload",
     "Recommender: tables live in host RAM, a share cached in GPU memory (default false)", true,
     BoolField<&Task::embedding_offload>},
    {"host.embedding_optimizer", "--embedding-optimizer",
     "Recommender: adam | rowwise-adagrad | sgd | one-state: the tables' optimizer states (default: by "
     "--optimizer)",
     false, EmbeddingOptimizerOf},
    {"host.embedding_tables", "--embedding-tables",
     "Recommender: the tables one by one, ROWSxDIM or ROWSxDIMxBYTES (45833188x128,36746x128x2)", false,
     ApplyEmbeddingTables},
    {"host.embedding_sharding", "--embedding-sharding",
     "Recommender: row | table: a slice of every table on each GPU, or each table whole on one (default row)",
     false, EmbeddingShardingOf},
    {"host.embedding_cache_ratio", "--embedding-cache-ratio",
     "Recommender: share of offloaded tables cached in GPU memory, 0.01 to 1 (default 0.2)", false,
     EmbeddingCacheRatio},
    {"recommender.dense_features", "--dense-features",
     "Recommender: dense input features of the bottom MLP (default 13, Criteo's)", false, ApplyDense},
    {"recommender.dense_layers", "--dense-layers",
     "Recommender: the bottom MLP's widths (512,256,128); the last is the embedding dimension", false,
     ApplyDense},
    {"recommender.over_layers", "--over-layers",
     "Recommender: the top MLP's widths (1024,1024,512,256,1); the last is the output", false, ApplyDense},
    {"recommender.interaction", "--interaction",
     "Recommender: dot | dcn: pairwise dot products, or a low-rank cross net (default dot)", false,
     ApplyDense},
    {"recommender.dcn_layers", "--dcn-layers", "Recommender: cross net layers (default 3)", false,
     ApplyDense},
    {"recommender.dcn_rank", "--dcn-rank", "Recommender: cross net rank (default 512)", false, ApplyDense},
    {"multimodal.preset", "--multimodal",
     "A multimodal preset: llava-1.5-7b-stage1, llava-1.5-7b-stage2, llava-1.5-13b-stage1, "
     "llava-1.5-13b-stage2, clip-vit-l-14 (its parts and published configuration; flags override)",
     false, ApplyMultimodal},
    {"multimodal.vision", "--vision-encoder",
     "Multimodal: the vision encoder (clip-vit-l-14-336, clip-vit-l-14)", false, ApplyMultimodal},
    {"multimodal.text", "--text-encoder",
     "Multimodal: a contrastive text encoder (clip-text-l-14) instead of a language model", false,
     ApplyMultimodal},
    {"multimodal.projector", "--projector",
     "Multimodal: linear | mlp2x-gelu (mlpNx-gelu, N up to 8) | none: the vision-to-language projector",
     false, ApplyMultimodal},
    {"multimodal.image_tokens", "--image-tokens",
     "Multimodal: tokens each image adds to the language model's sequence (576 for CLIP ViT-L/14-336)", false,
     ApplyMultimodal},
    {"multimodal.train", "--train",
     "Multimodal: the parts trained, PART or PART=lora (vision, projector, language, text; commas between); "
     "the others are frozen",
     false, ApplyMultimodal},
    {"storage.checkpoints_kept", "--checkpoints-kept", "Checkpoints kept on disk (default 1)", false,
     IntField<&Task::checkpoints_kept, 0, 10000>},
    {"storage.dataset", "--dataset-size", "Training data on local disk (500GB, 2TB; default not counted)",
     false, DatasetSize},
    {"constants.cuda_context", "--cuda-context", "Memory outside the allocator per GPU (default 0.5GB)",
     false, CudaContext},
    {"constants.headroom", "--headroom", "Share of the allocated memory kept free (default 10%)", false,
     Headroom},
    {"constants.grad_bytes", "--grad-bytes", "Bytes per gradient: 2 or 4 (default by strategy)", false,
     ConstantTwoOrFour<&Constants::grad_bytes>},
    {"constants.activation_factor", "--activation-factor",
     "Multiplies the activation inventory (default 1.15)", false, ActivationFactor},
    {"constants.zero_reduce_bucket", "--zero-reduce-bucket", "DeepSpeed reduce_bucket_size, elements (5e8)",
     false, ConstantElements<&Constants::zero_reduce_bucket>},
    {"constants.zero3_prefetch_bucket", "--zero3-prefetch-bucket",
     "DeepSpeed stage3_prefetch_bucket_size (5e7)", false,
     ConstantElements<&Constants::zero3_prefetch_bucket>},
    {"constants.ddp_bucket_view", "--ddp-bucket-view", "DDP gradient_as_bucket_view (default false)", true,
     ConstantFlag<&Constants::ddp_bucket_view>},
    {"constants.foreach_optimizer", "--foreach-optimizer",
     "PyTorch's multi-tensor optimizer step (default true)", true,
     ConstantFlag<&Constants::foreach_optimizer>},
    {"constants.zero_grad_set_to_none", "--zero-grad-set-to-none",
     "zero_grad frees the gradients (default true)", true, ConstantFlag<&Constants::zero_grad_set_to_none>},
    {"constants.qlora_double_quant", "--qlora-double-quant", "QLoRA double quantization (default true)", true,
     ConstantFlag<&Constants::qlora_double_quant>},
    {"constants.qlora_saves_inputs", "--qlora-saves-inputs",
     "4-bit layers keep their input, as bitsandbytes did before July 2024 (default false)", true,
     ConstantFlag<&Constants::qlora_saves_inputs>},
    {"constants.lora_adapter_bytes", "--lora-adapter-bytes", "Bytes per adapter weight: 2 or 4 (default 4)",
     false, ConstantTwoOrFour<&Constants::lora_adapter_bytes>},
    {"constants.fp8_copy_bytes", "--fp8-copy-bytes", "FP8 weight-copy bytes per linear weight (default 1)",
     false, Fp8CopyBytes},
    {"constants.host_buffer_factor", "--host-buffer-factor",
     "Multiplies DeepSpeed's host RAM, as its estimators do (default 1.5)", false, HostBufferFactor},
};

}  // namespace

std::string Origin::str() const {
  if (!file.empty()) return file + ":" + std::to_string(line) + ":" + std::to_string(col);
  return flag.empty() ? "default" : flag;
}

void Origin::Fail(const std::string& message) const {
  if (!file.empty()) throw FileError(file, line, col, message);
  if (!flag.empty()) throw FlagError(flag, message);
  throw UsageError(message);
}

const std::vector<KeyInfo>& SettingKeys() { return kKeys; }

bool ParseCount(const std::string& text, uint64_t* out) {
  std::string s(Trim(text));
  double mult = 1;
  if (!s.empty()) {
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
    if (u == 'K' || u == 'M' || u == 'B' || u == 'T') {
      mult = u == 'K' ? 1e3 : u == 'M' ? 1e6 : u == 'B' ? 1e9 : 1e12;
      s.pop_back();
    }
  }
  if (s.empty() || s.size() > 32 || s.find_first_not_of("0123456789.eE+") != std::string::npos) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end) * mult;
  if (end != s.c_str() + s.size() || !std::isfinite(v) || v < 1 || v > 1e14) return false;
  *out = static_cast<uint64_t>(std::llround(v));
  return true;
}

void Apply(Task& t, const Setting& s) {
  if (s.value.size() > 4096) s.origin.Fail("value longer than 4096 bytes");
  if (ControlCharAt(s.value) || InvalidUtf8At(s.value))
    s.origin.Fail("expected one line of text, got a control character or invalid UTF-8");
  t.origins[s.key] = s.origin;
  const auto it = std::find_if(kKeys.begin(), kKeys.end(), [&](const KeyInfo& k) { return s.key == k.key; });
  if (it == kKeys.end()) s.origin.Fail("unknown setting " + QuoteToken(s.key));
  it->apply(t, s);
}

}  // namespace gp::size
