// The plan of a host: every row of the table of layers that installs something plans its layer, in order
// (each reading the earlier layers' decisions), and plan/compose.h joins them into the one Plan `plan` prints
// and `apply` executes.
#pragma once
#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan/planner.h"

namespace gp::layers {

plan::Plan BuildPlan(const plan::PlanInput& in);

// Expands "a,b" items, checks each against ApplyLayers() (layers/table.h); throws FlagError
// `--only: unknown layer "drivr" (did you mean "driver"?)`, or for a layer that installs nothing (os, host,
// gpu) `--only: layer "os" is checked by doctor but installs nothing (layers: driver, ...)`.
std::vector<std::string> ParseLayerList(const std::string& flag, const std::vector<std::string>& items);

}  // namespace gp::layers
