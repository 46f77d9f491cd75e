// The nccl layer's plan and verify (its check is CheckNccl, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanNccl(const plan::LayerContext& ctx);
void VerifyNccl(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
