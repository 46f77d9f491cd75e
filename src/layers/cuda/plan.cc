// cuda's plan: the stack's apt packages at their pins, or with
// `source: redist` NVIDIA's archives into /opt/gpuprep/cuda/ (plan/components.cc, shared with the other
// CUDA components).
#include "layers/cuda/cuda.h"

namespace gp::layers {

plan::LayerPlan PlanCuda(const plan::LayerContext& ctx) {
  return plan::PlanComponent(ctx, "cuda", ctx.stack->cuda);
}

}  // namespace gp::layers
