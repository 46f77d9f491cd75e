// Activation memory: the tensors autograd keeps from the forward pass for the backward pass, counted
// tensor by tensor for one layer (the inventory of Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models", arXiv:2205.05198, section 4, adapted to the layer code of the reference
// implementations), plus the output layer's logits. Private to src/size/.
#pragma once
#include <string>

#include "size/task.h"

namespace gp::size {

struct ActivationEstimate {
  double bytes = 0;      // per GPU, at the start of the backward pass
  double per_layer = 0;  // one layer, all its tokens on this GPU
  double logits = 0;
  std::string formula;
  bool estimated = true;
  std::string why_not;  // when !estimated
};

// Bytes one layer keeps per token (role of the first group unless `decoder_side`), without recomputation.
double LayerBytesPerToken(const Task& t, LayerRole role);

// `layers_here`: layers on this GPU's pipeline stage; `first_stage`/`last_stage` decide in-flight
// micro-batches (1F1B keeps `pp` on the first stage) and the logits.
ActivationEstimate Activations(const Task& t, int layers_here, bool first_stage, bool last_stage);

// A vision network's (vision.h): the tensors its layer table saves for `micro_batch` images at the task's
// image size (autocast's 16-bit weight copies are counted with the weights); with full checkpointing, each
// block's input and the largest block recomputed. Not estimated for a network without a layer table.
ActivationEstimate VisionActivations(const Task& t);

}  // namespace gp::size
