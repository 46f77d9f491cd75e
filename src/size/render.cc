// Text and JSON renderings of an estimate (render.h). Sizes in text are decimal GB (10^9 bytes); JSON
// carries bytes.
#include "size/render.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "size/dense.h"
#include "size/embeddings.h"
#include "size/format.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {
namespace {

using nlohmann::ordered_json;

std::string Describe(const Task& t, const Estimate& e) {
  std::string trained;
  for (const auto& [part, how] : t.multimodal.trained)
    trained += (trained.empty() ? "" : ", ") + part + (how == Method::kLora ? " (LoRA)" : "");
  const size_t parts = t.multimodal.projector.empty() ? 2 : 3;
  if (!t.multimodal.vision.empty() && trained.empty()) trained = "nothing (every part frozen)";
  if (!t.multimodal.trained.empty() && t.multimodal.trained.size() < parts)
    trained += ", the other parts frozen";
  std::string method = !trained.empty()              ? "training " + trained
                       : !t.embedding_tables.empty() ? "training"
                       : t.method == Method::kFull   ? "full fine-tuning"
                       : t.method == Method::kLora   ? "LoRA r=" + std::to_string(t.lora_rank)
                                                     : "QLoRA r=" + std::to_string(t.lora_rank);
  std::string par =
      std::string(Name(t.strategy)) + " on " + std::to_string(t.gpus) + " GPU" + (t.gpus > 1 ? "s" : "");
  if (t.tp > 1) par += ", tp " + std::to_string(t.tp);
  if (t.pp > 1) par += ", pp " + std::to_string(t.pp);
  std::string s =
      TerminalSafe(e.model) + ": " + method + ", " + Name(t.precision) + ", " + Name(t.optimizer) +
      (t.offload != Offload::kNone ? std::string(" (offload ") + Name(t.offload) + ")" : "") + ", " + par;
  if (t.arch.family == Family::kVision) {
    s += "\nimages " + std::to_string(t.image_h) + "x" + std::to_string(t.image_w) + ", batch " +
         std::to_string(t.batch > 0 ? t.batch : t.micro_batch * t.gpus) + " (" +
         std::to_string(ImagesPerGpu(t)) + " per GPU)" + ", checkpointing " + Name(t.checkpointing);
    return s;
  }
  if (!t.embedding_tables.empty() && !t.arch.HasShape()) {  // a recommender's dense part as a bare count
    s += "\nmicro-batch " + std::to_string(t.micro_batch) + ", embedding tables below";
    return s;
  }
  if (!t.multimodal.text.empty()) {
    s += "\none image and its text per sample, micro-batch " + std::to_string(t.micro_batch) +
         ", checkpointing " + Name(t.checkpointing);
    return s;
  }
  const std::string images =
      t.multimodal.vision.empty() ? "" : " + " + std::to_string(t.multimodal.image_tokens) + " image tokens";
  s += "\nseq " + std::to_string(t.seq) + images + " x micro-batch " + std::to_string(t.micro_batch) +
       ", checkpointing " + Name(t.checkpointing) +
       (t.flash_attention ? ", flash attention" : ", eager attention") +
       (t.chunked_loss ? ", chunked loss" : "") + (t.compile ? ", compiled" : "") + ", " +
       Name(LossPrecisionOf(t)) + " loss";
  return s;
}

ordered_json Origins(const Task& t) {
  ordered_json o = ordered_json::object();
  for (const auto& [k, v] : t.origins) o[k] = v.str();
  return o;
}

// A transformer's batch is tokens: sequence x micro-batch; a vision network's is images at a size.
ordered_json Batch(const Task& t) {
  if (!t.dense.layers.empty())
    return {{"micro_batch", t.micro_batch}, {"grad_accumulation", t.grad_accumulation}};
  if (t.arch.family != Family::kVision)
    return {{"seq", t.seq}, {"micro_batch", t.micro_batch}, {"grad_accumulation", t.grad_accumulation}};
  return {{"images", t.batch > 0 ? t.batch : t.micro_batch * t.gpus},
          {"micro_batch", ImagesPerGpu(t)},
          {"image_height", t.image_h},
          {"image_width", t.image_w},
          {"grad_accumulation", t.grad_accumulation}};
}

// A recommender's tables and where they live (null without tables).
ordered_json Embeddings(const Task& t) {
  if (t.embedding_tables.empty()) return nullptr;
  const EmbeddingPlacement p = PlaceEmbeddings(t);
  ordered_json tables = ordered_json::array();
  for (size_t i = 0; i < t.embedding_tables.size(); ++i) {
    const auto& tab = t.embedding_tables[i];
    tables.push_back(
        {{"rows", tab.rows},
         {"dim", tab.dim},
         {"bytes_per_value", tab.bytes > 0 ? tab.bytes : t.embedding_bytes},
         {"gpu", p.rank_of_table.empty() ? ordered_json(nullptr) : ordered_json(p.rank_of_table[i])}});
  }
  return {
      {"tables", tables},
      {"bytes_per_value", t.embedding_bytes},
      {"sharding", Name(t.embedding_sharding)},
      {"optimizer", p.optimizer_name},
      {"placement", t.embedding_offload ? "host" : "gpu"},
      {"cache_ratio", t.embedding_offload ? ordered_json(t.embedding_cache_ratio) : ordered_json(nullptr)},
      {"table_bytes", WholeBytes(p.table)},
      {"optimizer_bytes", WholeBytes(p.optimizer)},
      {"rows_per_gpu", WholeBytes(p.rows_per_gpu)},
      {"gpu_bytes_per_gpu", WholeBytes(p.gpu_per_gpu)},
      {"host_bytes_per_gpu", WholeBytes(p.host_per_gpu)}};
}

// A recommender's dense part, part by part (null without dense layers).
ordered_json Dense(const Task& t) {
  if (t.dense.layers.empty()) return nullptr;
  const DenseCounts c = CountDense(t);
  ordered_json parts = ordered_json::array();
  for (const auto& p : c.parts)
    parts.push_back({{"name", p.name},
                     {"params", p.params},
                     {"saved_values_per_sample", WholeBytes(p.saved)},
                     {"out", p.out},
                     {"formula", p.formula}});
  const bool dcn = t.dense.dcn;
  return {{"interaction", dcn ? "dcn" : "dot"},
          {"dense_features", t.dense.features},
          {"dense_layers", t.dense.layers},
          {"over_layers", t.dense.over},
          {"dcn_layers", dcn ? ordered_json(t.dense.dcn_layers) : ordered_json(nullptr)},
          {"dcn_rank", dcn ? ordered_json(t.dense.dcn_rank) : ordered_json(nullptr)},
          {"params", c.params},
          {"saved_values_per_sample", WholeBytes(c.saved)},
          {"parts", parts},
          {"source", kDenseSource}};
}

// The per-GPU table: one row per term (with its formula and source when verbose), the allocated subtotal
// before the CUDA context, the per-GPU total and the all-GPU total.
void TextTermRows(std::ostringstream& out, const Task& t, const Estimate& e, bool verbose, const char* bold,
                  const char* reset) {
  auto row = [&](const std::string& label, const std::string& value) {
    out << "  " << std::left << std::setw(30) << label << std::right << std::setw(12) << value << "\n";
  };
  out << "  " << std::left << std::setw(30) << "PER GPU" << std::right << std::setw(12) << "GB"
      << "\n";
  for (const auto& term : e.terms) {
    if (term.key == "cuda_context") row("allocated subtotal", GbNum(e.allocated));
    if (term.key == "phases" && term.bytes == 0 && !verbose) continue;
    row(term.label, term.estimated ? GbNum(term.bytes) : "not estimated");
    if (verbose) {
      out << "      = " << term.formula << "\n";
      out << "      source: " << TerminalSafe(term.source) << "\n";
    }
  }
  out << bold << "  " << std::left << std::setw(30) << "per GPU" << std::right << std::setw(12)
      << GbNum(e.per_gpu) << reset << (e.lower_bound ? "  (lower bound)" : "") << "\n";
  if (t.gpus > 1) row("all " + std::to_string(t.gpus) + " GPUs", GbNum(e.total));
}

// The embedding tables' section: their size, optimizer states and where they are placed.
void TextEmbeddingTables(std::ostringstream& out, const Task& t) {
  if (t.embedding_tables.empty()) return;
  const EmbeddingPlacement p = PlaceEmbeddings(t);
  out << "\nEMBEDDING TABLES: " << t.embedding_tables.size() << " table(s), " << Gb(p.table) << " + "
      << p.optimizer_name << " optimizer states " << Gb(p.optimizer) << "; "
      << (t.embedding_offload
              ? "in host RAM, a " + Bytes(t.embedding_cache_ratio) + " share cached in GPU memory"
              : std::string(t.embedding_sharding == EmbeddingSharding::kRowWise
                                ? "sharded row-wise over the GPUs' memory"
                                : "placed table-wise on the GPUs' memory"))
      << ": " << Gb(p.gpu_per_gpu) << " GPU memory"
      << (t.embedding_offload ? " and " + Gb(p.host_per_gpu) + " host RAM" : std::string())
      << (p.rank_of_table.empty() ? " per GPU" : " on the heaviest GPU") << "\n";
}

// The dense part's layers and a multimodal model's parts, where the task has them.
void TextDenseAndParts(std::ostringstream& out, const Task& t, const Estimate& e) {
  if (!t.dense.layers.empty()) {
    out << "\nDENSE PART: " << Count(static_cast<double>(e.params)) << " parameters, trained data parallel\n";
    for (const auto& p : CountDense(t).parts) out << "  " << p.formula << "\n";
  }
  if (!e.parts.empty()) {
    out << "\nPARTS (per GPU: weights, gradients and optimizer states; activations):\n";
    for (const auto& p : e.parts)
      out << "  " << std::left << std::setw(10) << p.role << std::right << TerminalSafe(p.model) << ": "
          << Count(static_cast<double>(p.params)) << " parameters, " << p.train
          << (p.train == "lora" ? " (" + Count(static_cast<double>(p.trainable)) + " trained)"
                                : std::string())
          << "; " << Gb(p.states) << " states, " << Gb(p.activations) << " activations\n";
  }
}

// The answer to --gpu-memory: the smallest GPU count that fits, unknown for a lower bound, or none.
void TextFitAnswer(std::ostringstream& out, const Task& t, const FitAnswer& fit, const char* bold,
                   const char* reset) {
  if (fit.gpu_memory == 0) return;
  out << "\n" << bold;
  if (fit.fit && fit.fit->at.lower_bound)
    out << "smallest GPU count for " << Gb(static_cast<double>(fit.gpu_memory))
        << " per GPU: unknown (the estimate is a lower bound: activations not estimated; the lower bound "
           "alone needs "
        << fit.fit->gpus << ")";
  else if (fit.fit)
    out << "smallest GPU count for " << Gb(static_cast<double>(fit.gpu_memory))
        << " per GPU: " << fit.fit->gpus << " (" << Gb(fit.fit->at.per_gpu) << " per GPU)";
  else
    out << "no GPU count up to 65536 fits " << Gb(static_cast<double>(fit.gpu_memory))
        << " per GPU with this task (" << Name(t.strategy) << " does not shard enough)";
  out << reset << "\n";
}

}  // namespace

std::string RenderText(const Task& t, const Estimate& e, const FitAnswer& fit, bool verbose, bool color) {
  std::ostringstream out;
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  out << Describe(t, e) << "\n";
  out << "parameters " << Count(static_cast<double>(e.params)) << ", trainable "
      << Count(static_cast<double>(e.trainable)) << "; " << Count(static_cast<double>(e.params_per_gpu))
      << " on each GPU before data-parallel sharding (data parallel " << e.dp << ")\n\n";
  TextTermRows(out, t, e, verbose, bold, reset);
  TextEmbeddingTables(out, t);
  TextDenseAndParts(out, t, e);
  if (e.host_per_gpu > 0)
    out << "\nCPU RAM: " << Gb(e.host_per_gpu) << " per GPU = " << e.host_formula << "\n";
  TextFitAnswer(out, t, fit, bold, reset);
  if (!e.notes.empty()) {
    out << "\nnotes:\n";
    for (const auto& n : e.notes) out << "  - " << TerminalSafe(n) << "\n";
  }
  if (!verbose) out << "\n(--verbose shows each term's formula and source)\n";
  return out.str();
}

namespace {

// A multimodal model's parts (docs/json.md): present only for a model of parts.
ordered_json MultimodalJson(const Task& t, const Estimate& e) {
  const Task::Multimodal& mm = t.multimodal;
  ordered_json parts = ordered_json::array();
  for (const auto& p : e.parts)
    parts.push_back({{"role", p.role},
                     {"model", p.model},
                     {"params", p.params},
                     {"trainable_params", p.trainable},
                     {"train", p.train},
                     {"states_bytes", WholeBytes(p.states)},
                     {"activations_bytes", WholeBytes(p.activations)}});
  return {{"preset", mm.preset.empty() ? ordered_json(nullptr) : ordered_json(mm.preset)},
          {"image_tokens", mm.text.empty() ? ordered_json(mm.image_tokens) : ordered_json(nullptr)},
          {"text_tokens", mm.text.empty() ? ordered_json(t.seq) : ordered_json(nullptr)},
          {"parts", parts}};
}

// The per-GPU terms, in the order of the estimate.
ordered_json TermsJson(const Estimate& e) {
  ordered_json terms = ordered_json::array();
  for (const auto& term : e.terms)
    terms.push_back({{"key", term.key},
                     {"label", term.label},
                     {"bytes", WholeBytes(term.bytes)},
                     {"estimated", term.estimated},
                     {"formula", term.formula},
                     {"source", term.source}});
  return terms;
}

// The constants the estimate used (defaults or the command line's).
ordered_json ConstantsJson(const Constants& c) {
  return {{"cuda_context", c.cuda_context},
          {"headroom", c.headroom},
          {"grad_bytes", c.grad_bytes},
          {"activation_factor", c.activation_factor},
          {"zero_reduce_bucket", c.zero_reduce_bucket},
          {"zero3_prefetch_bucket", c.zero3_prefetch_bucket},
          {"ddp_bucket_view", c.ddp_bucket_view},
          {"foreach_optimizer", c.foreach_optimizer},
          {"zero_grad_set_to_none", c.zero_grad_set_to_none},
          {"qlora_double_quant", c.qlora_double_quant},
          {"qlora_saves_inputs", c.qlora_saves_inputs},
          {"lora_adapter_bytes", c.lora_adapter_bytes},
          {"fp8_copy_bytes", c.fp8_copy_bytes},
          {"host_buffer_factor", c.host_buffer_factor},
          {"gpus_per_node", c.gpus_per_node}};
}

// The task as estimated: model, method, precision, parallelism, batch, switches and constants.
ordered_json TaskJson(const Task& t, const Estimate& e) {
  ordered_json lora = nullptr;
  if (t.method != Method::kFull)
    lora = {{"rank", t.lora_rank}, {"targets", t.lora_targets}, {"dropout", t.lora_dropout}};
  const bool vision = t.arch.family == Family::kVision;
  ordered_json task = {
      {"model", e.model},
      {"model_source", t.model_source},
      {"family", FamilyName(t.arch.family)},
      {"params", e.params},
      {"trainable_params", e.trainable},
      {"method", Name(t.method)},
      {"lora", lora},
      {"precision", Name(t.precision)},
      {"optimizer", Name(t.optimizer)},
      {"offload", Name(t.offload)},
      {"parallel",
       {{"strategy", Name(t.strategy)},
        {"gpus", t.gpus},
        {"tp", t.tp},
        {"pp", t.pp},
        {"dp", e.dp},
        {"shard", e.shard}}},
      {"batch", Batch(t)},
      {"grad_checkpointing", Name(t.checkpointing)},
      {"flash_attention", vision ? ordered_json(nullptr) : ordered_json(t.flash_attention)},
      {"chunked_loss", vision ? ordered_json(nullptr) : ordered_json(t.chunked_loss)},
      {"compile", t.compile},
      {"loss_precision", vision ? ordered_json(nullptr) : ordered_json(Name(LossPrecisionOf(t)))},
      {"constants", ConstantsJson(t.c)},
      {"embeddings", Embeddings(t)},
      {"dense", Dense(t)},
      {"origins", Origins(t)}};
  if (!e.parts.empty()) task["multimodal"] = MultimodalJson(t, e);
  return task;
}

// The answer to --gpu-memory (null when not asked).
ordered_json FitJson(const FitAnswer& fit) {
  if (fit.gpu_memory == 0) return nullptr;
  // A lower bound answers no count: "unknown", with the count the lower bound alone needs.
  const bool unknown = fit.fit && fit.fit->at.lower_bound;
  const bool known = fit.fit && !unknown;
  return {{"gpu_memory_bytes", fit.gpu_memory},
          {"gpus", known ? ordered_json(fit.fit->gpus) : ordered_json(nullptr)},
          {"per_gpu_bytes", known ? ordered_json(WholeBytes(fit.fit->at.per_gpu)) : ordered_json(nullptr)},
          {"unknown", unknown},
          {"lower_bound_gpus", unknown ? ordered_json(fit.fit->gpus) : ordered_json(nullptr)}};
}

}  // namespace

ordered_json RenderJson(const Task& t, const Estimate& e, const FitAnswer& fit) {
  return {{"gpuprep", GPUPREP_VERSION},
          {"task", TaskJson(t, e)},
          {"per_gpu",
           {{"terms", TermsJson(e)},
            {"allocated_bytes", WholeBytes(e.allocated)},
            {"total_bytes", WholeBytes(e.per_gpu)}}},
          {"gpus", t.gpus},
          {"total_bytes", WholeBytes(e.total)},
          {"host_offload_bytes_per_gpu", WholeBytes(e.host_per_gpu)},
          {"host_formula", e.host_formula},
          {"lower_bound", e.lower_bound},
          {"fit", FitJson(fit)},
          {"notes", e.notes}};
}

std::string RenderModelTable() {
  std::ostringstream out;
  out << std::left << std::setw(20) << "MODEL" << std::setw(17) << "FAMILY" << std::right << std::setw(7)
      << "LAYERS" << std::setw(8) << "HIDDEN" << std::setw(7) << "HEADS" << std::setw(5) << "KV"
      << std::setw(7) << "FFN" << std::setw(8) << "VOCAB" << std::setw(6) << "TIED" << std::setw(10)
      << "PARAMS"
      << "\n";
  for (const auto& a : ModelTable()) {
    out << std::left << std::setw(20) << a.name << std::setw(17) << FamilyName(a.family) << std::right;
    if (a.family == Family::kVision) {
      out << std::setw(48) << "-" << std::setw(10) << Count(static_cast<double>(a.vision_params)) << "\n";
      continue;
    }
    out << std::setw(7) << (a.layers + a.decoder_layers) << std::setw(8) << a.hidden << std::setw(7)
        << a.heads << std::setw(5) << a.kv_heads << std::setw(7) << a.ffn << std::setw(8) << a.vocab
        << std::setw(6) << (a.tied_embeddings ? "yes" : "no") << std::setw(10)
        << Count(static_cast<double>(CountParams(a).total)) << "\n";
  }
  out << "\nSources: gpuprep size --list-models --json\n";
  return out.str();
}

ordered_json ModelTableJson() {
  ordered_json models = ordered_json::array();
  for (const auto& a : ModelTable())
    models.push_back({{"name", a.name},
                      {"display", a.display},
                      {"family", FamilyName(a.family)},
                      {"layers", a.layers},
                      {"decoder_layers", a.decoder_layers},
                      {"hidden", a.hidden},
                      {"heads", a.heads},
                      {"kv_heads", a.kv_heads},
                      {"ffn", a.ffn},
                      {"vocab", a.vocab},
                      {"tied_embeddings", a.tied_embeddings},
                      {"params", CountParams(a).total},
                      {"source", a.source},
                      {"published_params", a.published_params},
                      {"published_source", a.published_source}});
  return {{"models", models}};
}

}  // namespace gp::size
