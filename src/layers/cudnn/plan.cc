// cudnn's plan: the stack's apt packages at their pins (built for the stack's CUDA), or with
// `source: redist` NVIDIA's archives into /opt/gpuprep/cudnn/ (plan/components.cc, shared with the other
// CUDA components).
#include "layers/cudnn/cudnn.h"

namespace gp::layers {

plan::LayerPlan PlanCudnn(const plan::LayerContext& ctx) {
  return plan::PlanComponent(ctx, "cudnn", ctx.stack->cudnn);
}

}  // namespace gp::layers
