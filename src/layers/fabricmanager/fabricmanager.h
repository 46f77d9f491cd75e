// The fabricmanager layer's plan and verify (its check is CheckFabricManager, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanFabricManager(const plan::LayerContext& ctx);
void VerifyFabricManager(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
