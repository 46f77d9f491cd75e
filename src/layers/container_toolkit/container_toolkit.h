// The container_toolkit layer's plan and verify (its check is CheckContainerToolkit, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "host/files.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanContainerToolkit(const plan::LayerContext& ctx);
// What the plan reads of the file half of the host (layers/table.h Layer::reads): the runtime's config.toml
// (its mode) and apt's list files (sources.list, sources.list.d/*.list: the experimental channel).
void ContainerToolkitReads(const manifest::Stack& stack, const probe::HostFacts& host, host::Reads& out);
void VerifyContainerToolkit(const apply::VerifyEnv& env, verdict::LayerReport& r);

}  // namespace gp::layers
