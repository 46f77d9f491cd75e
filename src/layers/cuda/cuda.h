// The cuda layer's verify (its check is CheckCuda, layers/check.h; its plan the CUDA components', in its
// row).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

void VerifyCuda(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
