// nccl layer: the check is CheckCudaLibrary's (layers/check.h, layers/library.cc); the plan is the CUDA
// components' (plan/layer_plan.h PlanComponent: the stack's apt packages at their pins, or NVIDIA's
// archives); verify holds the pins and loads NCCL at the pinned release (apply/verify.h). The row points at
// those shared functions.
#include "layers/check.h"

#include "apply/verify.h"
#include "layers/table.h"
#include "plan/layer_plan.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckNccl(const CheckInput& in) {
  return CheckCudaLibrary(in, "nccl", "NCCL", in.stack.nccl, in.host.nccl);
}

extern const Layer kNcclLayer = {
    "nccl",
    CheckNccl,
    nullptr,
    [](const plan::LayerContext& ctx) { return plan::PlanComponent(ctx, "nccl", ctx.stack->nccl); },
    [](const apply::VerifyEnv& env, LayerReport& r) {
      apply::PinsAndHolds(env, env.stack->nccl.packages, r);
      apply::VerifyLibrary(env, "NCCL", env.stack->nccl.version, r, true);
    },
    [](const manifest::Stack& s, const probe::HostFacts&) { return s.nccl.enabled; },
    [](const manifest::Stack& s, const probe::HostFacts& h, host::Reads& r) {
      RedistReads("nccl", s.nccl, h, r);
    }};

}  // namespace gp::layers
