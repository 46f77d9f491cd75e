// Activations of a vision task (activations.h): the layer table of vision.h at the task's image size and
// images per GPU. CUDA's autocast lists decide each tensor's precision under fp16-mixed and bf16-mixed.
#include <algorithm>
#include <cstdio>

#include "size/activations.h"
#include "size/format.h"
#include "size/vision.h"

namespace gp::size {

ActivationEstimate VisionActivations(const Task& t) {
  ActivationEstimate r;
  const Amp amp = t.precision == Precision::kFp32 ? Amp::kNone : Amp::kCuda;
  // Attention as PyTorch 2 runs it on a GPU: torchvision's ViT asks nn.MultiheadAttention for no weights,
  // which then calls the fused scaled_dot_product_attention kernel.
  const VisionCount v = CountVision(t.arch.name, t.image_h, t.image_w, ImagesPerGpu(t), amp, true);
  if (!v.known) {
    r.estimated = false;
    r.why_not = "not estimated: no layer table for this network (lower bound)";
    return r;
  }
  const double outside = v.saved - v.block_saved;  // stem, transitions, head, loss
  const bool full = t.checkpointing == Checkpointing::kFull;
  const double kept = full ? outside + v.block_inputs + v.largest_block : v.saved;
  r.bytes = kept;  // autocast's 16-bit weight copies are in the weights term (6 B per parameter under DDP)
  r.per_layer = v.blocks > 0 ? v.block_saved / v.blocks : 0;
  char buf[512];
  const int n = ImagesPerGpu(t);
  const std::string images = std::to_string(n) + " image" + (n > 1 ? "s" : "") + " x " +
                             std::to_string(t.image_h) + "x" + std::to_string(t.image_w);
  if (full)
    std::snprintf(
        buf, sizeof buf,
        "full recomputation, %s: outside the %d blocks %s + the blocks' inputs %s + the largest block "
        "recomputed %s",
        images.c_str(), v.blocks, Gb(outside).c_str(), Gb(v.block_inputs).c_str(),
        Gb(v.largest_block).c_str());
  else
    std::snprintf(buf, sizeof buf, "tensors saved for backward by the layer table, %s: %s", images.c_str(),
                  Gb(v.saved).c_str());
  r.formula = buf;
  r.formula += " (" + v.source + ")";
  return r;
}

}  // namespace gp::size
