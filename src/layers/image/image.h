// The image layer's plan and verify (its check is CheckImage, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanImage(const plan::LayerContext& ctx);
void VerifyImage(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
