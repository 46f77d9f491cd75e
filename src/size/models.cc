// The shipped model table. Why a C++ table and not a YAML file under manifests/: every row is a handful of
// integers that params.cc turns into counts, so the compiler checks each field's type, `size` needs no
// YAML reader below the CLI, and tests/size/params_test.cc checks every row against the count its
// publisher gives. Each row names where its hyper-parameters come from and where the published count is.
#include <algorithm>

#include "size/model.h"
#include "util/strings.h"

namespace gp::size {
namespace {

// Hyper-parameter sources (public repositories and papers).
constexpr const char* kTtLlama2 = "pytorch/torchtune torchtune/models/llama2/_model_builders.py@bd2a0fc7";
constexpr const char* kTtLlama3 = "pytorch/torchtune torchtune/models/llama3/_model_builders.py@bd2a0fc7";
constexpr const char* kTtLlama31 = "pytorch/torchtune torchtune/models/llama3_1/_model_builders.py@bd2a0fc7";
constexpr const char* kTtLlama32 = "pytorch/torchtune torchtune/models/llama3_2/_model_builders.py@bd2a0fc7";
constexpr const char* kTtMistral = "pytorch/torchtune torchtune/models/mistral/_model_builders.py@bd2a0fc7";
constexpr const char* kTtQwen25 =
    "pytorch/torchtune torchtune/models/qwen2_5/_model_builders.py@bd2a0fc7 (q/k/v bias: "
    "torchtune/models/qwen2/_component_builders.py)";
constexpr const char* kBert =
    "google-research/bert README.md (L, H, A) with huggingface/transformers "
    "src/transformers/models/bert/configuration_bert.py defaults (vocabulary 30522, 512 positions, 2 types)";
constexpr const char* kT5 =
    "Raffel et al., Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer, "
    "arXiv:1910.10683, sections 3.1.1 and 3.7 (d_kv 64), vocabulary 32128 as in huggingface/transformers "
    "src/transformers/models/t5/configuration_t5.py";
constexpr const char* kTorchvision = "pytorch/vision torchvision/models/resnet.py (weights meta num_params)";
constexpr const char* kTvVit =
    "pytorch/vision torchvision/models/vision_transformer.py (weights meta num_params)";
constexpr const char* kTvConvnext = "pytorch/vision torchvision/models/convnext.py (weights meta num_params)";
constexpr const char* kYolo =
    "ultralytics/ultralytics ultralytics/cfg/models/v8/yolov8.yaml (scales: \"YOLOv8n summary: 225 layers, "
    "3157200 parameters\" ...)";
constexpr const char* kYolo11 =
    "ultralytics/ultralytics ultralytics/cfg/models/11/yolo11.yaml at 0a2ae50b (scales: \"summary: 319 "
    "layers, "
    "2624080 parameters\" ...)";

// Published counts.
constexpr const char* kKerasLlama =
    "keras-team/keras-hub keras_hub/src/models/llama/llama_presets.py@71453d08";
constexpr const char* kKerasLlama3 =
    "keras-team/keras-hub keras_hub/src/models/llama3/llama3_presets.py@71453d08";
constexpr const char* kKerasMistral =
    "keras-team/keras-hub keras_hub/src/models/mistral/mistral_presets.py@71453d08";
constexpr const char* kKerasQwen = "keras-team/keras-hub keras_hub/src/models/qwen/qwen_presets.py@71453d08";
constexpr const char* kKerasBert = "keras-team/keras-hub keras_hub/src/models/bert/bert_presets.py@71453d08";
constexpr const char* kKerasT5 = "keras-team/keras-hub keras_hub/src/models/t5/t5_presets.py@71453d08";
constexpr const char* kTogether =
    "togethercomputer/together-python src/together/finetune.py (model_param_count), 2023";
constexpr const char* kCard3 =
    "meta-llama/llama-models models/llama3/MODEL_CARD.md@a9c89c47 (\"8B and 70B\")";
constexpr const char* kCard31 =
    "meta-llama/llama-models models/llama3_1/MODEL_CARD.md@a9c89c47 (\"8B, 70B and 405B\")";
constexpr const char* kCard32 =
    "meta-llama/llama-models models/llama3_2/MODEL_CARD.md@a9c89c47 (\"1B (1.23B)\")";
constexpr const char* kPeft32 =
    "huggingface/peft "
    "method_comparison/MetaMathQA/results/full-finetuning--llama-3.2-3B-lr_0.00001.json@5d602fdb "
    "(num_total_params)";

Architecture Decoder(const char* name, const char* display, int vocab, int layers, int heads, int kv,
                     int hidden, int ffn, bool tied, bool bias, const char* source) {
  Architecture a;
  a.name = name;
  a.display = display;
  a.family = Family::kDecoder;
  a.vocab = vocab;
  a.layers = layers;
  a.heads = heads;
  a.kv_heads = kv;
  a.hidden = hidden;
  a.ffn = ffn;
  a.tied_embeddings = tied;
  a.qkv_bias = bias;
  a.source = source;
  return a;
}

Architecture Published(Architecture a, uint64_t count, uint64_t precision, const char* source) {
  a.published_params = count;
  a.published_precision = precision;
  a.published_source = source;
  return a;
}

Architecture Bert(const char* name, const char* display, int layers, int hidden, int heads, uint64_t count) {
  Architecture a;
  a.name = name;
  a.display = display;
  a.family = Family::kEncoder;
  a.vocab = 30522;
  a.layers = layers;
  a.hidden = hidden;
  a.heads = a.kv_heads = heads;
  a.ffn = 4 * hidden;  // "feed-forward/filter size to be 4H" (google-research/bert README)
  a.gated_mlp = false;
  a.positions = 512;
  a.token_types = 2;
  a.source = kBert;
  return Published(a, count, 1, kKerasBert);
}

Architecture T5(const char* name, const char* display, int layers, int hidden, int heads, int ffn,
                uint64_t count) {
  Architecture a;
  a.name = name;
  a.display = display;
  a.family = Family::kEncoderDecoder;
  a.vocab = 32128;
  a.layers = a.decoder_layers = layers;
  a.hidden = hidden;
  a.heads = a.kv_heads = heads;
  a.head_dim = 64;
  a.ffn = ffn;
  a.gated_mlp = false;  // T5 v1.0: ReLU MLP
  a.tied_embeddings = true;
  a.rel_buckets = 32;
  a.source = kT5;
  return Published(a, count, 1, kKerasT5);
}

Architecture Vision(const char* name, const char* display, uint64_t count, uint64_t precision,
                    const char* source) {
  Architecture a;
  a.name = name;
  a.display = display;
  a.family = Family::kVision;
  a.vision_params = count;
  a.source = source;
  return Published(a, count, precision, source);
}

// Llama 2, 3, 3.1 and 3.2.
std::vector<Architecture> LlamaModelRows() {
  constexpr uint64_t kExact = 1, kBillion = 1000000000, k10M = 10000000;
  return {
      Published(Decoder("llama-2-7b", "Llama 2 7B", 32000, 32, 32, 32, 4096, 11008, false, false, kTtLlama2),
                6738415616, kExact, kKerasLlama),
      Published(
          Decoder("llama-2-13b", "Llama 2 13B", 32000, 40, 40, 40, 5120, 13824, false, false, kTtLlama2),
          13015864320, kExact, kTogether),
      Published(Decoder("llama-2-70b", "Llama 2 70B", 32000, 80, 64, 8, 8192, 28672, false, false, kTtLlama2),
                68976648192, kExact, kTogether),
      Published(Decoder("llama-3-8b", "Llama 3 8B", 128256, 32, 32, 8, 4096, 14336, false, false, kTtLlama3),
                8030261248, kExact, kKerasLlama3),
      Published(
          Decoder("llama-3-70b", "Llama 3 70B", 128256, 80, 64, 8, 8192, 28672, false, false, kTtLlama3),
          70000000000, kBillion, kCard3),
      Published(
          Decoder("llama-3.1-8b", "Llama 3.1 8B", 128256, 32, 32, 8, 4096, 14336, false, false, kTtLlama31),
          8030261248, kExact, kKerasLlama3),
      Published(
          Decoder("llama-3.1-70b", "Llama 3.1 70B", 128256, 80, 64, 8, 8192, 28672, false, false, kTtLlama31),
          70000000000, kBillion, kCard31),
      Published(Decoder("llama-3.1-405b", "Llama 3.1 405B", 128256, 126, 128, 8, 16384, 53248, false, false,
                        kTtLlama31),
                405000000000, kBillion, kCard31),
      Published(
          Decoder("llama-3.2-1b", "Llama 3.2 1B", 128256, 16, 32, 8, 2048, 8192, true, false, kTtLlama32),
          1230000000, k10M, kCard32),
      Published(
          Decoder("llama-3.2-3b", "Llama 3.2 3B", 128256, 28, 24, 8, 3072, 8192, true, false, kTtLlama32),
          3212749824, kExact, kPeft32),
  };
}

// Mistral 7B and Qwen2.5 0.5B to 72B.
std::vector<Architecture> MistralQwenModelRows() {
  constexpr uint64_t kExact = 1, k10M = 10000000, k100M = 100000000;
  return {
      Published(Decoder("mistral-7b", "Mistral 7B", 32000, 32, 32, 8, 4096, 14336, false, false, kTtMistral),
                7241732096, kExact, kKerasMistral),
      Published(Decoder("qwen2.5-0.5b", "Qwen2.5 0.5B", 151936, 24, 14, 2, 896, 4864, true, true, kTtQwen25),
                494032768, kExact, kKerasQwen),
      Published(Decoder("qwen2.5-1.5b", "Qwen2.5 1.5B", 151936, 28, 12, 2, 1536, 8960, true, true, kTtQwen25),
                1540000000, k10M, "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct (model card: 1.54B)"),
      Published(Decoder("qwen2.5-3b", "Qwen2.5 3B", 151936, 36, 16, 2, 2048, 11008, true, true, kTtQwen25),
                3085938688, kExact, kKerasQwen),
      Published(Decoder("qwen2.5-7b", "Qwen2.5 7B", 152064, 28, 28, 4, 3584, 18944, false, true, kTtQwen25),
                7610000000, k10M, "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct (model card: 7.61B)"),
      Published(Decoder("qwen2.5-14b", "Qwen2.5 14B", 152064, 48, 40, 8, 5120, 13824, false, true, kTtQwen25),
                14700000000, k100M, "https://huggingface.co/Qwen/Qwen2.5-14B-Instruct (model card: 14.7B)"),
      Published(Decoder("qwen2.5-32b", "Qwen2.5 32B", 152064, 64, 40, 8, 5120, 27648, false, true, kTtQwen25),
                32763876352, kExact, kKerasQwen),
      Published(Decoder("qwen2.5-72b", "Qwen2.5 72B", 152064, 80, 64, 8, 8192, 29568, false, true, kTtQwen25),
                72706203648, kExact, kKerasQwen),
  };
}

// The encoders (BERT) and encoder-decoders (T5).
std::vector<Architecture> EncoderModelRows() {
  return {
      Bert("bert-base-uncased", "BERT base (uncased)", 12, 768, 12, 109482240),
      Bert("bert-large-uncased", "BERT large (uncased)", 24, 1024, 16, 335141888),
      T5("t5-small", "T5 small", 6, 512, 8, 2048, 60506624),
      T5("t5-base", "T5 base", 12, 768, 12, 3072, 222903552),
      T5("t5-large", "T5 large", 24, 1024, 16, 4096, 737668096),
  };
}

// The vision networks: ResNet, ViT, ConvNeXt, YOLOv8 and YOLO11.
std::vector<Architecture> VisionModelRows() {
  constexpr uint64_t kExact = 1;
  return {
      Vision("resnet-18", "ResNet-18", 11689512, kExact, kTorchvision),
      Vision("resnet-50", "ResNet-50", 25557032, kExact, kTorchvision),
      Vision("resnet-101", "ResNet-101", 44549160, kExact, kTorchvision),
      Vision("resnet-152", "ResNet-152", 60192808, kExact, kTorchvision),
      Vision("vit-b-16", "ViT-B/16", 86567656, kExact, kTvVit),
      Vision("vit-l-16", "ViT-L/16", 304326632, kExact, kTvVit),
      Vision("convnext-tiny", "ConvNeXt-T", 28589128, kExact, kTvConvnext),
      Vision("convnext-base", "ConvNeXt-B", 88591464, kExact, kTvConvnext),
      Vision("yolov8n", "YOLOv8n", 3157200, kExact, kYolo),
      Vision("yolov8s", "YOLOv8s", 11166560, kExact, kYolo),
      Vision("yolov8m", "YOLOv8m", 25902640, kExact, kYolo),
      Vision("yolov8l", "YOLOv8l", 43691520, kExact, kYolo),
      Vision("yolov8x", "YOLOv8x", 68229648, kExact, kYolo),
      Vision("yolo11n", "YOLO11n", 2624080, kExact, kYolo11),
      Vision("yolo11s", "YOLO11s", 9458752, kExact, kYolo11),
      Vision("yolo11m", "YOLO11m", 20114688, kExact, kYolo11),
      Vision("yolo11l", "YOLO11l", 25372160, kExact, kYolo11),
      Vision("yolo11x", "YOLO11x", 56966176, kExact, kYolo11),
  };
}

// Every row, in the table's order: decoders, encoders, vision networks.
std::vector<Architecture> Build() {
  std::vector<Architecture> table;
  for (const auto& rows : {LlamaModelRows(), MistralQwenModelRows(), EncoderModelRows(), VisionModelRows()})
    table.insert(table.end(), rows.begin(), rows.end());
  return table;
}

// "Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", "llama2_7b" -> "llama-2-7b"-style key for matching.
std::string Key(const std::string& name) {
  std::string s = ToLower(name);
  if (auto slash = s.rfind('/'); slash != std::string::npos) s = s.substr(slash + 1);
  for (const char* suffix : {"-hf", "-instruct", "-chat", "-v0.1"})
    if (EndsWith(s, suffix)) s = s.substr(0, s.size() - std::string(suffix).size());
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ') out += c;
  if (StartsWith(out, "meta")) out = out.substr(4);
  return out;
}

}  // namespace

const std::vector<Architecture>& ModelTable() {
  static const std::vector<Architecture> table = Build();
  return table;
}

const Architecture* FindModel(const std::string& name) {
  const std::string key = Key(name);
  const auto& t = ModelTable();
  auto it = std::find_if(t.begin(), t.end(), [&](const Architecture& a) { return Key(a.name) == key; });
  return it == t.end() ? nullptr : &*it;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& a : ModelTable()) names.push_back(a.name);
  return names;
}

}  // namespace gp::size
