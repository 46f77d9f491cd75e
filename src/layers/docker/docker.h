// The docker layer's plan and verify (its check is CheckDocker, layers/check.h), and what the other
// container layers read of its plan: whether an engine will be there to configure and pull into.
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanDocker(const plan::LayerContext& ctx);
void VerifyDocker(const apply::VerifyEnv& env, verdict::LayerReport& r);

// Whether the host has an engine now (one that answers, or an engine package).
bool EnginePresent(const plan::LayerContext& ctx);

struct EngineReady {
  bool ready = false;     // an engine will run when the later layers' steps do
  bool installs = false;  // this plan installs it
};
// What the docker layer's decision (planned before the toolkit and the image) leaves for them.
EngineReady EngineFor(const plan::LayerContext& ctx);

}  // namespace gp::layers
