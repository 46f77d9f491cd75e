// Model architectures for the training-memory estimate: the shipped table of common dense models
// (models.cc, every row citing its source), and the parameter counts derived from the hyper-parameters
// (params.cc). Plain values; nothing here reads files.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gp::size {

enum class Family {
  kDecoder,         // Llama-style: RMSNorm, rotary positions, gated (SwiGLU) MLP, optional GQA and qkv bias
  kEncoder,         // BERT-style: learned positions, post-LayerNorm, GELU MLP, dropout 0.1
  kEncoderDecoder,  // T5-style: relative position buckets, RMS LayerNorm, ReLU or gated-GELU MLP
  kVision,          // convolutional or detection networks: only a published parameter count
};
const char* FamilyName(Family f);  // "decoder", "encoder", "encoder-decoder", "vision"

struct Architecture {
  std::string name;     // lower-case key, e.g. "llama-2-70b"
  std::string display;  // "Llama 2 70B"
  Family family = Family::kDecoder;
  int layers = 0;          // decoder / encoder layers (kEncoderDecoder: encoder layers)
  int decoder_layers = 0;  // kEncoderDecoder only
  int hidden = 0;          // model width h (T5: d_model)
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; == heads for multi-head attention
  int head_dim = 0;  // 0: hidden / heads (T5: d_kv)
  int ffn = 0;       // MLP inner width f
  int vocab = 0;
  bool tied_embeddings = false;
  bool gated_mlp = true;       // three MLP matrices (gate, up, down) instead of two
  bool qkv_bias = false;       // biases on q, k, v (Qwen2); BERT has biases on every linear
  int positions = 0;           // kEncoder: learned position embeddings
  int token_types = 0;         // kEncoder: segment embeddings
  int rel_buckets = 0;         // kEncoderDecoder: relative attention buckets
  uint64_t vision_params = 0;  // kVision: the published count (its only number)
  std::string source;          // where the hyper-parameters come from (repository and path, or URL)
  // The count its publisher gives, and to what precision (1: exact; 1e7: "3.21B"; 1e9: "70B").
  uint64_t published_params = 0;
  uint64_t published_precision = 1;
  std::string published_source;

  int HeadDim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
  // True when the hyper-parameters needed for activations and layer sizes are known.
  bool HasShape() const {
    return family != Family::kVision && layers > 0 && hidden > 0 && heads > 0 && ffn > 0 && vocab > 0;
  }
};

// One weight matrix of a layer, as LoRA and QLoRA see it: canonical name q, k, v, o, gate, up, down
// (cross-attention in T5 decoders: the same names, counted twice per layer).
struct Linear {
  std::string name;
  uint64_t in = 0, out = 0;
  bool bias = false;
};

enum class LayerRole { kDecoder, kEncoder, kT5Encoder, kT5Decoder };

struct LayerGroup {
  LayerRole role = LayerRole::kDecoder;
  int count = 0;
  uint64_t params = 0;         // all parameters of one layer (weights, biases, norms)
  uint64_t linear_params = 0;  // weights of its Linear layers (what 4-bit quantization stores)
  std::vector<Linear> linears;
};

struct ParamCounts {
  uint64_t total = 0;
  uint64_t embedding = 0;  // token (+ position, segment) embeddings, the embedding norm
  uint64_t head = 0;       // untied output layer, final norms, pooler, relative-position tables
  std::vector<LayerGroup> groups;
  uint64_t LayerParams() const;   // all layers together
  uint64_t LargestLayer() const;  // the largest single layer
  int Layers() const;             // all layers of all groups
};

// Counts every parameter from the hyper-parameters (kVision: the published count, all in `head`).
ParamCounts CountParams(const Architecture& a);

// The shipped table, in display order, and lookup by name (case-insensitive; "llama2-7b",
// "Llama-2-7b-hf" and "meta-llama/Llama-2-7b-hf" find "llama-2-7b").
const std::vector<Architecture>& ModelTable();
const Architecture* FindModel(const std::string& name);
std::vector<std::string> ModelNames();

}  // namespace gp::size
