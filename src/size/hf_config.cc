// config.json -> Architecture (hf_config.h). Field names are those of transformers' LlamaConfig,
// MistralConfig, Qwen2Config, BertConfig and T5Config.
#include "size/hf_config.h"

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/input.h"
#include "util/json_locator.h"

namespace gp::size {
namespace {

using nlohmann::json;
constexpr int kMaxDepth = 32;

class Reader {
 public:
  Reader(const json& doc, const std::string& text, std::string path)
      : doc_(doc), locator_(text), path_(std::move(path)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const {
    auto [line, col] = locator_.Find(key);
    throw FileError(path_, line, col, (key.empty() ? "" : key + ": ") + message);
  }

  const json* Get(const std::string& key) const {
    auto it = doc_.find(key);
    return it == doc_.end() || it->is_null() ? nullptr : &*it;
  }

  int Int(const std::string& key, long long hi, int fallback = -1) const {
    const json* v = Get(key);
    if (!v) {
      if (fallback >= 0) return fallback;
      Fail("", "missing required key \"" + key + "\"");
    }
    if (!v->is_number_integer()) Fail(key, "expected a whole number");
    if (v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(hi))
      Fail(key, "must be between 1 and " + std::to_string(hi) + ", got " +
                    std::to_string(v->get<unsigned long long>()));
    const long long n = v->get<long long>();
    if (n < 1 || n > hi)
      Fail(key, "must be between 1 and " + std::to_string(hi) + ", got " + std::to_string(n));
    return static_cast<int>(n);
  }

  bool Bool(const std::string& key, bool fallback) const {
    const json* v = Get(key);
    if (!v) return fallback;
    if (!v->is_boolean()) Fail(key, "expected true or false");
    return v->get<bool>();
  }

  std::string String(const std::string& key) const {
    const json* v = Get(key);
    if (!v) return "";
    if (!v->is_string()) Fail(key, "expected a string");
    return v->get<std::string>();
  }

 private:
  const json& doc_;
  JsonLocator locator_;
  std::string path_;
};

json Parse(const std::string& text, const std::string& path) {
  if (text.size() > kMaxConfigBytes)
    throw FileError(path, 1, 1, "larger than the 1 MiB limit for a config.json");
  if (auto deep = JsonTooDeepAt(text, kMaxDepth)) {
    auto [line, col] = LineColumnAt(text, *deep);
    throw FileError(path, line, col, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  try {
    json doc = json::parse(text);
    if (!doc.is_object()) throw FileError(path, 1, 1, "expected a JSON object (a config.json)");
    return doc;
  } catch (const json::parse_error& e) {
    auto [line, col] = LineColumnAt(text, e.byte == 0 ? 0 : e.byte - 1);
    throw FileError(path, line, col, "invalid JSON: " + ParseErrorReason(e.what()));
  } catch (const json::exception&) {
    throw FileError(path, 1, 1, "invalid JSON: a number out of range");
  }
}

// The model's own name, when it is a short printable one ("meta-llama/Llama-2-7b-hf").
std::string NameOf(const Reader& r, const std::string& path) {
  std::string n = r.String("_name_or_path");
  bool ok = !n.empty() && n.size() <= 128;
  for (char c : n) ok = ok && c > 0x20 && c < 0x7f;
  return ok ? n : path;
}

void RefuseMoe(const Reader& r, const std::string& type) {
  static const char* kTypes[] = {"mixtral",     "qwen2_moe", "qwen3_moe", "deepseek_v2",
                                 "deepseek_v3", "dbrx",      "jamba",     "olmoe",
                                 "granitemoe",  "phimoe",    "llama4",    "gpt_oss"};
  for (const char* t : kTypes)
    if (type == t)
      r.Fail("model_type",
             "\"" + type + "\" is a mixture-of-experts model; gpuprep size models dense models only");
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    const json* v = r.Get(key);
    if (v && v->is_number_unsigned() && v->get<unsigned long long>() > 1)
      r.Fail(key, "mixture-of-experts models are not modelled (" +
                      std::to_string(v->get<unsigned long long>()) + " experts)");
  }
}

// A decoder's shape (llama, mistral, qwen2): sizes, grouped-query heads, an explicit head size, bias and
// tied embeddings.
void HfDecoderShape(const Reader& r, const std::string& type, Architecture& a) {
  a.family = Family::kDecoder;
  a.hidden = r.Int("hidden_size", 1 << 20);
  a.layers = r.Int("num_hidden_layers", 10000);
  a.heads = r.Int("num_attention_heads", 1 << 16);
  a.kv_heads = r.Int("num_key_value_heads", 1 << 16, a.heads);
  a.ffn = r.Int("intermediate_size", 1 << 22);
  a.vocab = r.Int("vocab_size", 1 << 24);
  a.head_dim = r.Int("head_dim", 1 << 16, 0);
  if (a.head_dim * a.heads == a.hidden) a.head_dim = 0;
  a.tied_embeddings = r.Bool("tie_word_embeddings", false);
  a.qkv_bias = type == "qwen2" ? true : r.Bool("attention_bias", false);
  if (a.head_dim == 0 && a.hidden % a.heads != 0)
    r.Fail("num_attention_heads",
           std::to_string(a.heads) + " heads do not divide hidden_size " + std::to_string(a.hidden));
  if (a.heads % a.kv_heads != 0)
    r.Fail("num_key_value_heads",
           std::to_string(a.kv_heads) + " do not divide the " + std::to_string(a.heads) + " attention heads");
}

// BERT's shape: sizes, positions and token types; a plain (not gated) MLP.
void HfBertShape(const Reader& r, Architecture& a) {
  a.family = Family::kEncoder;
  a.hidden = r.Int("hidden_size", 1 << 20);
  a.layers = r.Int("num_hidden_layers", 10000);
  a.heads = a.kv_heads = r.Int("num_attention_heads", 1 << 16);
  a.ffn = r.Int("intermediate_size", 1 << 22);
  a.vocab = r.Int("vocab_size", 1 << 24);
  a.positions = r.Int("max_position_embeddings", 1 << 20, 512);
  a.token_types = r.Int("type_vocab_size", 1 << 10, 2);
  a.gated_mlp = false;
  if (a.hidden % a.heads != 0)
    r.Fail("num_attention_heads",
           std::to_string(a.heads) + " heads do not divide hidden_size " + std::to_string(a.hidden));
}

// T5's shape: sizes, head size, decoder layers, relative position buckets and the MLP's kind.
void HfT5Shape(const Reader& r, Architecture& a) {
  a.family = Family::kEncoderDecoder;
  a.hidden = r.Int("d_model", 1 << 20);
  a.head_dim = r.Int("d_kv", 1 << 16);
  a.ffn = r.Int("d_ff", 1 << 22);
  a.layers = r.Int("num_layers", 10000);
  a.decoder_layers = r.Int("num_decoder_layers", 10000, a.layers);
  a.heads = a.kv_heads = r.Int("num_heads", 1 << 16);
  a.vocab = r.Int("vocab_size", 1 << 24);
  a.rel_buckets = r.Int("relative_attention_num_buckets", 1 << 16, 32);
  const std::string proj = r.String("feed_forward_proj");
  if (!proj.empty() && proj != "relu" && proj != "gated-gelu" && proj != "gated-relu" && proj != "gelu")
    r.Fail("feed_forward_proj", "expected relu, gelu, gated-gelu or gated-relu");
  a.gated_mlp = proj.rfind("gated-", 0) == 0;
  a.tied_embeddings = r.Bool("tie_word_embeddings", true);
}

}  // namespace

Architecture ParseHfConfig(const std::string& text, const std::string& display_path) {
  const json doc = Parse(text, display_path);
  const Reader r(doc, text, display_path);
  const std::string type = r.String("model_type");
  if (type.empty()) r.Fail("", "missing required key \"model_type\"");
  RefuseMoe(r, type);
  Architecture a;
  a.name = NameOf(r, display_path);
  a.display = a.name;
  a.source = display_path;
  if (type == "llama" || type == "mistral" || type == "qwen2") {
    HfDecoderShape(r, type, a);
  } else if (type == "bert") {
    HfBertShape(r, a);
  } else if (type == "t5") {
    HfT5Shape(r, a);
  } else {
    r.Fail("model_type", "\"" + type + "\" is not modelled (supported: llama, mistral, qwen2, bert, t5)");
  }
  // Keeps every count within 64 bits: the attention width is at most 2^22, as the MLP width is.
  if (static_cast<long long>(a.heads) * a.HeadDim() > (1LL << 22))
    r.Fail(type == "t5" ? "d_kv" : "head_dim", "heads x head size above 4194304");
  return a;
}

}  // namespace gp::size
