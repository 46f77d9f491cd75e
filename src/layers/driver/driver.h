// The driver layer's plan and verify (its check is CheckDriver, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "layers/check.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanDriver(const plan::LayerContext& ctx);
void VerifyDriver(const apply::VerifyEnv& env, verdict::LayerReport& r);
// Every installed kernel has an nvidia module for the driver, and the next boot's most of all (kernels.cc).
void CheckKernels(const CheckInput& in, verdict::LayerReport& r);

}  // namespace gp::layers
