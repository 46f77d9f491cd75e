// Vision networks, layer by layer: every tensor autograd saves for the backward pass of one forward pass,
// and every parameter, counted from the network's public definition (vision.cc names each). Private to
// src/size/.
#pragma once
#include <cstdint>
#include <string>

namespace gp::size {

// Which autocast op lists decide each tensor's precision: none (fp32 training), CUDA's (the GPUs that
// train), or PyTorch's CPU autocast (bf16; what the saved-tensor tests can run without a GPU).
enum class Amp { kNone, kCuda, kCpu };

struct VisionCount {
  bool known = false;        // false: no layer table for this network
  double saved = 0;          // bytes saved for backward, all images together
  double weight_casts = 0;   // low-precision copies autocast makes of the weights (kept until backward)
  double largest_block = 0;  // the largest block's saved bytes (what checkpointing recomputes at once)
  double block_inputs = 0;   // the inputs of all blocks (what checkpointing keeps)
  double block_saved = 0;    // what all blocks save together (what checkpointing drops)
  uint64_t params = 0;
  int blocks = 0;
  std::string source;  // the public definition the table follows
};

// What a network accepts: sizes that are multiples of `stride`, square only (ViT's position embedding is
// built for one square size), and the size it is trained at by default (Ultralytics' imgsz 640; torchvision's
// classification recipe crops to 224). Zero stride: no layer table.
struct VisionInput {
  int stride = 0;
  bool square = false;
  int default_size = 0;
};
VisionInput VisionInputOf(const std::string& name);

// `name` as in the model table ("resnet-50", "vit-b-16", "convnext-tiny", "yolov8x"); height and width in
// pixels (ViT: multiples of 16; the others: of 32). `images` is the batch on one GPU. `fused_attention`:
// PyTorch 2's scaled_dot_product_attention kernel (a GPU), else attention as PyTorch 1.13 computes it.
VisionCount CountVision(const std::string& name, int height, int width, int images, Amp amp,
                        bool fused_attention = false);

}  // namespace gp::size
