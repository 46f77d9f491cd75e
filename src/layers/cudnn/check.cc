// cudnn layer: the check is CheckCudaLibrary's (layers/check.h, layers/library.cc) plus the redist source;
// the plan is the CUDA components' (plan/layer_plan.h PlanComponent: the stack's apt packages at their pins,
// built for the stack's CUDA, or NVIDIA's archives into /opt/gpuprep/cudnn/); verify holds the pins and
// loads cuDNN at the pinned release (apply/verify.h). The row points at those shared functions.
#include "layers/check.h"

#include "apply/verify.h"
#include "layers/table.h"
#include "plan/layer_plan.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckCudnn(const CheckInput& in) {
  LayerReport r = CheckCudaLibrary(in, "cudnn", "cuDNN", in.stack.cudnn, in.host.cudnn);
  // `source: redist`: the stack's cuDNN is gpuprep's install of NVIDIA's archive under /opt/gpuprep/cudnn;
  // a cuDNN found elsewhere (apt, a pip wheel) is not it.
  const std::string prefix = "/opt/gpuprep/cudnn/current/";
  if (in.stack.cudnn.enabled && in.stack.cudnn.source == "redist" && in.host.cudnn.found &&
      in.host.cudnn.source.find(prefix) == std::string::npos)
    r.Add("cudnn.not-redist", Status::kFail,
          "cuDNN " + in.host.cudnn.version + " comes from " + in.host.cudnn.source +
              ", not the stack's redistributable install in /opt/gpuprep/cudnn (source: redist)",
          ApplyFix("cudnn"));
  return r;
}

extern const Layer kCudnnLayer = {
    "cudnn",
    CheckCudnn,
    nullptr,
    [](const plan::LayerContext& ctx) { return plan::PlanComponent(ctx, "cudnn", ctx.stack->cudnn); },
    [](const apply::VerifyEnv& env, LayerReport& r) {
      apply::PinsAndHolds(env, env.stack->cudnn.packages, r);
      apply::VerifyLibrary(env, "cuDNN", env.stack->cudnn.version, r, false);
    },
    [](const manifest::Stack& s, const probe::HostFacts&) { return s.cudnn.enabled; },
    [](const manifest::Stack& s, const probe::HostFacts& h, host::Reads& r) {
      RedistReads("cudnn", s.cudnn, h, r);
    }};

}  // namespace gp::layers
