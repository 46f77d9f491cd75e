// The container_toolkit layer's plan and verify (its check is CheckContainerToolkit, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanContainerToolkit(const plan::LayerContext& ctx);
void VerifyContainerToolkit(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
