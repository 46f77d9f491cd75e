// nccl's plan: the stack's apt packages at their pins (built for the stack's CUDA), or with
// `source: redist` NVIDIA's archives into /opt/gpuprep/nccl/ (plan/components.cc, shared with the other
// CUDA components).
#include "layers/nccl/nccl.h"

namespace gp::layers {

plan::LayerPlan PlanNccl(const plan::LayerContext& ctx) {
  return plan::PlanComponent(ctx, "nccl", ctx.stack->nccl);
}

}  // namespace gp::layers
