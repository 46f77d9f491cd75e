// The cudnn layer's plan and verify (its check is CheckCudnn, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanCudnn(const plan::LayerContext& ctx);
void VerifyCudnn(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
