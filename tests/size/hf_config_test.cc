// A Hugging Face config.json is outside input: read strictly, with errors that point at the value.
#include "size/hf_config.h"

#include <catch2/catch.hpp>

#include "manifest/helpers.h"

using gp::test::ErrorOf;
namespace size = gp::size;

namespace {

// The shape of meta-llama/Llama-2-7b-hf's config.json (the keys transformers' LlamaConfig reads).
const char* kLlama2 =
    "{\n"
    "  \"_name_or_path\": \"meta-llama/Llama-2-7b-hf\",\n"
    "  \"architectures\": [\"LlamaForCausalLM\"],\n"
    "  \"hidden_size\": 4096,\n"
    "  \"intermediate_size\": 11008,\n"
    "  \"model_type\": \"llama\",\n"
    "  \"num_attention_heads\": 32,\n"
    "  \"num_hidden_layers\": 32,\n"
    "  \"num_key_value_heads\": 32,\n"
    "  \"rope_scaling\": null,\n"
    "  \"tie_word_embeddings\": false,\n"
    "  \"torch_dtype\": \"float16\",\n"
    "  \"vocab_size\": 32000\n"
    "}\n";

std::string Edit(const std::string& from, const std::string& to) {
  std::string s = kLlama2;
  const size_t at = s.find(from);
  if (at == std::string::npos) throw std::logic_error("no " + from);
  return s.replace(at, from.size(), to);
}

std::string Error(const std::string& text) {
  return ErrorOf([&] { size::ParseHfConfig(text, "config.json"); });
}

}  // namespace

TEST_CASE("config.json: a Llama config gives the table's counts", "[size]") {
  const size::Architecture a = size::ParseHfConfig(kLlama2, "config.json");
  CHECK(a.name == "meta-llama/Llama-2-7b-hf");
  CHECK(a.family == size::Family::kDecoder);
  CHECK(size::CountParams(a).total == 6738415616ULL);
  // Qwen2 has q/k/v biases and ties embeddings in its small sizes.
  const std::string qwen =
      "{\"model_type\": \"qwen2\", \"hidden_size\": 896, \"intermediate_size\": 4864, "
      "\"num_attention_heads\": 14, \"num_hidden_layers\": 24, \"num_key_value_heads\": 2, "
      "\"tie_word_embeddings\": true, \"vocab_size\": 151936}";
  CHECK(size::CountParams(size::ParseHfConfig(qwen, "q.json")).total == 494032768ULL);
  const std::string bert =
      "{\"model_type\": \"bert\", \"hidden_size\": 1024, \"intermediate_size\": 4096, "
      "\"num_attention_heads\": 16, \"num_hidden_layers\": 24, \"vocab_size\": 30522}";
  CHECK(size::CountParams(size::ParseHfConfig(bert, "b.json")).total == 335141888ULL);
  const std::string t5 =
      "{\"model_type\": \"t5\", \"d_model\": 512, \"d_kv\": 64, \"d_ff\": 2048, \"num_layers\": 6, "
      "\"num_heads\": 8, \"vocab_size\": 32128, \"feed_forward_proj\": \"relu\"}";
  CHECK(size::CountParams(size::ParseHfConfig(t5, "t.json")).total == 60506624ULL);
}

TEST_CASE("config.json: wrong types and values point at the value", "[size]") {
  CHECK(Error(Edit("\"hidden_size\": 4096", "\"hidden_size\": \"4096\"")) ==
        "2 config.json:4:18: hidden_size: expected a whole number");
  CHECK(Error(Edit("\"hidden_size\": 4096", "\"hidden_size\": 4096.5")) ==
        "2 config.json:4:18: hidden_size: expected a whole number");
  CHECK(Error(Edit("\"num_hidden_layers\": 32", "\"num_hidden_layers\": -1")) ==
        "2 config.json:8:24: num_hidden_layers: must be between 1 and 10000, got -1");
  CHECK(Error(Edit("\"vocab_size\": 32000", "\"vocab_size\": 99999999999")) ==
        "2 config.json:13:17: vocab_size: must be between 1 and 16777216, got 99999999999");
  CHECK(Error(Edit("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": \"no\"")) ==
        "2 config.json:11:26: tie_word_embeddings: expected true or false");
  CHECK(Error(Edit("  \"hidden_size\": 4096,\n", "")) ==
        "2 config.json:1:1: missing required key \"hidden_size\"");
  CHECK(Error(Edit("\"num_attention_heads\": 32", "\"num_attention_heads\": 30")) ==
        "2 config.json:7:26: num_attention_heads: 30 heads do not divide hidden_size 4096");
  CHECK(Error(Edit("\"num_key_value_heads\": 32", "\"num_key_value_heads\": 5")) ==
        "2 config.json:9:26: num_key_value_heads: 5 do not divide the 32 attention heads");
  CHECK(Error(Edit("\"model_type\": \"llama\"", "\"model_type\": \"gemma2\"")) ==
        "2 config.json:6:17: model_type: \"gemma2\" is not modelled (supported: llama, mistral, qwen2, bert, "
        "t5)");
}

TEST_CASE("config.json: an integer past 2^63 is quoted as written, never wrapped", "[size]") {
  CHECK(Error(Edit("\"vocab_size\": 32000", "\"vocab_size\": 18446744073709551615")) ==
        "2 config.json:13:17: vocab_size: must be between 1 and 16777216, got 18446744073709551615");
  CHECK(Error(Edit("\"vocab_size\": 32000", "\"vocab_size\": 9223372036854775808")) ==
        "2 config.json:13:17: vocab_size: must be between 1 and 16777216, got 9223372036854775808");
  CHECK(Error(Edit("\"vocab_size\": 32000", "\"vocab_size\": 32000, \"num_experts\": 9223372036854775809")) ==
        "2 config.json:13:39: num_experts: mixture-of-experts models are not modelled (9223372036854775809 "
        "experts)");
}

TEST_CASE("config.json: mixture-of-experts configurations are refused", "[size]") {
  CHECK(
      Error(Edit("\"model_type\": \"llama\"", "\"model_type\": \"mixtral\"")) ==
      "2 config.json:6:17: model_type: \"mixtral\" is a mixture-of-experts model; gpuprep size models dense "
      "models only");
  CHECK(Error(Edit("\"vocab_size\": 32000", "\"vocab_size\": 32000, \"num_local_experts\": 8")) ==
        "2 config.json:13:45: num_local_experts: mixture-of-experts models are not modelled (8 experts)");
}

TEST_CASE("config.json: hostile files", "[size]") {
  CHECK(Error("") ==
        "2 config.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
  CHECK(Error("{\"model_type\": \"llama\",}") ==
        "2 config.json:1:24: invalid JSON: syntax error while parsing object key - unexpected '}'; expected "
        "string "
        "literal");
  CHECK(Error("[1, 2]") == "2 config.json:1:1: expected a JSON object (a config.json)");
  CHECK(Error(std::string(40, '[') + std::string(40, ']')) ==
        "2 config.json:1:33: nested deeper than 32 levels");
  CHECK(Error("{\"model_type\": \"ll\xff\"}").find("2 config.json:1:") == 0);
  CHECK(Error("{\"x\": 1e999}") == "2 config.json:1:1: invalid JSON: a number out of range");
  CHECK(Error("{\"pad\": \"" + std::string(size::kMaxConfigBytes, 'x') + "\"}") ==
        "2 config.json:1:1: larger than the 1 MiB limit for a config.json");
  CHECK(Error("{\"model_type\": 7}") == "2 config.json:1:16: model_type: expected a string");
  CHECK(Error("{\"hidden_size\": 1}") == "2 config.json:1:1: missing required key \"model_type\"");
  // A name with control characters is not printed; the path stands in for it.
  const size::Architecture a =
      size::ParseHfConfig(Edit("meta-llama/Llama-2-7b-hf", "x\\u001b[31m"), "c.json");
  CHECK(a.name == "c.json");
}
