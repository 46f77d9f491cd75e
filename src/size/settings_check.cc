// Finish (settings.h): the checks that need more than one setting, each reported at the setting that
// cannot be combined with the others.
#include <algorithm>

#include "size/dense.h"
#include "size/format.h"
#include "size/multimodal.h"
#include "size/settings.h"
#include "size/vision.h"
#include "util/error.h"

namespace gp::size {
namespace {

const Origin& At(const Task& t, const std::string& key) {
  static const Origin kNone;
  auto it = t.origins.find(key);
  return it == t.origins.end() ? kNone : it->second;
}

bool Has(const Task& t, const std::string& key) { return t.origins.count(key) > 0; }

// --params, with the hyper-parameters given beside it, becomes a Llama-style decoder.
void ParamsModel(Task& t) {
  Architecture& a = t.arch;
  a.name = Count(static_cast<double>(t.params_override)) + "-parameter model";
  a.display = a.name;
  a.family = Family::kDecoder;
  a.gated_mlp = true;
  if (a.kv_heads == 0) a.kv_heads = a.heads;
  a.source = "given on the command line or in the task";
  t.model_source = "parameter count";
  if (!a.HasShape()) {
    t.notes.push_back(
        !t.embedding_rows.empty()
            ? "the dense part is a bare parameter count: its activations are not estimated"
            : "activations need --layers, --hidden, --heads, --ffn and --vocab next to --params");
    return;
  }
  const double computed = static_cast<double>(CountParams(a).total);
  const double given = static_cast<double>(t.params_override);
  if (std::abs(computed - given) > 0.1 * given)
    t.notes.push_back("the hyper-parameters give " + Count(computed) +
                      " parameters for a Llama-style decoder, not the " + Count(given) +
                      " of --params; the model states use --params");
}

void CheckShape(const Task& t) {
  const Architecture& a = t.arch;
  if (a.family == Family::kVision || a.heads == 0) return;
  if (a.head_dim == 0 && a.hidden % a.heads != 0)
    At(t, "architecture.heads")
        .Fail(std::to_string(a.heads) + " heads do not divide the hidden size " + std::to_string(a.hidden));
  if (a.kv_heads > 0 && a.heads % a.kv_heads != 0)
    At(t, "architecture.kv_heads")
        .Fail(std::to_string(a.kv_heads) + " key/value heads do not divide the " + std::to_string(a.heads) +
              " attention heads");
}

void CheckParallel(const Task& t) {
  const Architecture& a = t.arch;
  if (a.heads > 0 && a.heads % t.tp != 0)
    At(t, "parallel.tp")
        .Fail("tensor parallelism " + std::to_string(t.tp) + " does not divide the model's " +
              std::to_string(a.heads) + " attention heads");
  if (t.gpus % (t.tp * t.pp) != 0)
    At(t, Has(t, "parallel.gpus") ? "parallel.gpus" : "parallel.tp")
        .Fail("--tp x --pp = " + std::to_string(t.tp * t.pp) + " needs a multiple of " +
              std::to_string(t.tp * t.pp) + " GPUs; --gpus is " + std::to_string(t.gpus));
  if (a.HasShape() && t.pp > CountParams(a).Layers())
    At(t, "parallel.pp")
        .Fail("more pipeline stages than the model's " + std::to_string(CountParams(a).Layers()) + " layers");
  if (t.offload == Offload::kOptimizer && (t.strategy == Strategy::kDdp || IsFsdp(t.strategy)))
    At(t, "offload")
        .Fail(t.strategy == Strategy::kDdp
                  ? "DDP cannot offload; ZeRO (zero1, zero2, zero3) offloads the optimizer"
                  : "FSDP offloads parameters, gradients and optimizer together: use --offload params");
  if (t.offload == Offload::kParams && t.strategy != Strategy::kZero3 && t.strategy != Strategy::kFsdp &&
      t.strategy != Strategy::kFsdpHybrid)
    At(t, "offload")
        .Fail("parameters are offloaded by zero3, fsdp and fsdp-hybrid only, not " +
              std::string(Name(t.strategy)));
}

void CheckMethod(const Task& t) {
  const Architecture& a = t.arch;
  if (a.family == Family::kVision && t.method != Method::kFull)
    At(t, "method")
        .Fail("LoRA and QLoRA are modelled for transformer models; " + a.display + " is a vision network");
  if (t.method != Method::kFull && !a.HasShape())
    At(t, "method")
        .Fail(
            "LoRA needs the model's layers, hidden size, heads, MLP size and vocabulary "
            "(--layers, --hidden, --heads, --ffn, --vocab with --params)");
  if (t.method != Method::kFull && !a.gated_mlp &&
      std::find(t.lora_targets.begin(), t.lora_targets.end(), "gate") != t.lora_targets.end()) {
    if (Has(t, "lora.targets"))
      At(t, "lora.targets").Fail(a.display + " has no gate projection (its MLP has two matrices: up, down)");
  }
  if (t.loss_precision == LossPrecision::k16bit && t.precision == Precision::kFp32)
    At(t, "loss_precision").Fail("a 16-bit loss needs 16-bit training; --precision is fp32");
  if (t.compile && a.family != Family::kDecoder)
    At(t, "compile").Fail("torch.compile is modelled for decoder models only");
  if (a.family == Family::kEncoder && a.positions > 0 && t.seq > a.positions)
    At(t, "batch.seq")
        .Fail(a.display + " has " + std::to_string(a.positions) + " positions; --seq " +
              std::to_string(t.seq) + " does not fit");
}

// A vision task speaks images: --image-size and --batch (images over all GPUs), never a sequence.
void CheckImagesOnly(const Task& t) {
  const bool vision = t.arch.family == Family::kVision;
  for (const char* key : {"batch.image_size", "batch.images"})
    if (!vision && Has(t, key))
      At(t, key).Fail("images are a vision network's; " + t.arch.display +
                      " is a transformer: give --seq and --micro-batch");
  if (!vision) return;
  for (const char* key : {"batch.seq", "flash_attention", "chunked_loss", "loss_precision", "dropout"})
    if (Has(t, key))
      At(t, key).Fail(t.arch.display +
                      " is a vision network: it has no sequence, attention kernel choice or "
                      "token loss (give --image-size and --batch)");
  if (Has(t, "batch.images") && Has(t, "batch.micro_batch"))
    At(t, "batch.images")
        .Fail("give --batch (images per step over all GPUs) or --micro-batch (images per GPU), not both");
  if (t.tp > 1 || t.pp > 1)
    At(t, t.tp > 1 ? "parallel.tp" : "parallel.pp")
        .Fail(
            "tensor and pipeline parallelism are not modelled for vision networks (they train data "
            "parallel)");
  if (t.precision == Precision::kBf16Pure || t.precision == Precision::kFp8)
    At(t, "precision").Fail("vision networks train in fp32 or with autocast: fp32, fp16-mixed or bf16-mixed");
  if (t.checkpointing == Checkpointing::kSelective)
    At(t, "grad_checkpointing").Fail("selective recomputation is a transformer's; vision: none or full");
}

// The image size the network accepts, and the batch split over the GPUs.
void FinishImages(Task& t) {
  if (t.arch.family != Family::kVision) return;
  const VisionInput in = VisionInputOf(t.arch.name);
  if (in.stride == 0) return;
  if (t.image_h == 0) {
    t.image_h = t.image_w = in.default_size;
    t.notes.push_back("image size " + std::to_string(in.default_size) +
                      " (the network's default; --image-size)");
  }
  const std::string size = std::to_string(t.image_h) + "x" + std::to_string(t.image_w);
  if (t.image_h % in.stride != 0 || t.image_w % in.stride != 0)
    At(t, "batch.image_size")
        .Fail(t.arch.display + " takes sizes that are multiples of " + std::to_string(in.stride) +
              " pixels, not " + size);
  if (in.square && t.image_h != t.image_w)
    At(t, "batch.image_size").Fail(t.arch.display + " takes square images, not " + size);
  if (t.arch.name.rfind("yolo", 0) == 0)
    t.notes.push_back(
        "not counted: the label assigner's temporaries, the detection objective's other temporaries and the "
        "EMA copy of the "
        "weights; MMYOLO's published peaks for YOLOv8 at 640 pixels run 17% (x) to 46% (n) above the "
        "allocated "
        "subtotal");
  if (t.batch > 0) {
    if (t.batch % t.gpus != 0)
      At(t, "batch.images")
          .Fail("--batch " + std::to_string(t.batch) + " does not divide over " + std::to_string(t.gpus) +
                " GPUs (each GPU takes batch / GPUs images)");
    t.micro_batch = t.batch / t.gpus;
  }
}

// Embedding tables need both their rows and their dimension, and make the workload a recommender's.
void CheckHost(Task& t) {
  const bool given = !t.embedding_given.empty();
  if (given && (Has(t, "host.embedding_rows") || Has(t, "host.embedding_dim")))
    At(t, "host.embedding_tables")
        .Fail(
            "give the tables one by one (--embedding-tables) or as --embedding-rows and --embedding-dim, not "
            "both");
  const bool rows = !t.embedding_rows.empty() || given, dim = !t.embedding_dims.empty() || given;
  if (rows != dim)
    At(t, rows ? "host.embedding_rows" : "host.embedding_dim")
        .Fail(rows ? "--embedding-rows needs --embedding-dim" : "--embedding-dim needs --embedding-rows");
  if (!rows)
    for (const char* k : {"host.embedding_offload", "host.embedding_bytes", "host.embedding_optimizer",
                          "host.embedding_cache_ratio", "host.embedding_sharding"})
      if (Has(t, k)) At(t, k).Fail("describe the tables first: --embedding-rows and --embedding-dim");
  if (!given && rows && t.embedding_dims.size() != 1 && t.embedding_dims.size() != t.embedding_rows.size())
    At(t, "host.embedding_dim")
        .Fail(std::to_string(t.embedding_dims.size()) + " dimensions for " +
              std::to_string(t.embedding_rows.size()) + " tables: give one for all, or one per table");
  t.embedding_tables = t.embedding_given;
  if (!given)
    for (size_t i = 0; i < t.embedding_rows.size(); ++i)
      t.embedding_tables.push_back(
          {t.embedding_rows[i], t.embedding_dims.size() == 1 ? t.embedding_dims[0] : t.embedding_dims[i], 0});
  double bytes = 0;
  for (const auto& tab : t.embedding_tables)
    bytes += static_cast<double>(tab.rows) * tab.dim * (tab.bytes > 0 ? tab.bytes : t.embedding_bytes);
  // The tables' bytes must stay countable: more than 2^60 bytes (1 EiB) is no table a server holds.
  if (bytes > static_cast<double>(uint64_t{1} << 60))
    At(t, given ? "host.embedding_tables" : "host.embedding_rows")
        .Fail("the tables hold " + Gb(bytes) + ", more than 2^60 bytes");
  if (rows && t.workload && *t.workload != WorkloadKind::kRecommender)
    At(t, "host.workload").Fail("embedding tables are a recommender's: --workload recommender");
  if (rows) t.workload = WorkloadKind::kRecommender;
}

}  // namespace

void Finish(Task& t) {
  FinishMultimodal(t);
  const bool model = Has(t, "model"), config = Has(t, "config"), params = Has(t, "params");
  if (model && config) At(t, "config").Fail("give --model or --config, not both");
  if (params && (model || config))
    At(t, "params").Fail("--params describes a model of its own; drop --model/--config or --params");
  if (!model && !config && !params && !Has(t, "recommender.dense_layers") && t.multimodal.text.empty())
    throw UsageError(
        "size: name the model: --model NAME (gpuprep size --list-models), --config FILE or --params N");
  for (const auto& [key, origin] : t.origins)
    if (key.rfind("architecture.", 0) == 0 && key != "architecture.experts" && !params)
      origin.Fail(
          "architecture settings go with --params (a model of the table or a config.json has its own)");
  if (config && t.arch.name.empty()) throw UsageError("size: the config file was not read");
  if (params) ParamsModel(t);
  if (t.method != Method::kFull && !Has(t, "lora.targets") && !t.arch.gated_mlp)
    t.lora_targets = {"q", "k", "v", "o", "up", "down"};
  CheckShape(t);
  CheckParallel(t);
  CheckMethod(t);
  CheckImagesOnly(t);
  FinishImages(t);
  CheckHost(t);
  FinishDense(t);
}

}  // namespace gp::size
