// The cuda layer's plan and verify (its check is CheckCuda, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanCuda(const plan::LayerContext& ctx);
void VerifyCuda(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
