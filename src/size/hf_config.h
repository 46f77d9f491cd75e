// A Hugging Face config.json as the model of a task. The file is outside input: at most 1 MiB, nesting 32,
// valid JSON; every field read is type- and range-checked, and errors point at the value
// (`config.json:7:3: num_attention_heads: expected a whole number`). Supported `model_type`s: llama,
// mistral, qwen2 (decoders), bert, t5. Mixture-of-experts configurations are refused.
#pragma once
#include <string>

#include "size/model.h"

namespace gp::size {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// Throws gp::FileError naming `display_path`.
Architecture ParseHfConfig(const std::string& text, const std::string& display_path);

}  // namespace gp::size
