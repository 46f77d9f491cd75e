// The plan as a composition of values: each layer's plan (a LayerPlan, in the order of the table of
// layers) joined into one Plan: the package state read once, the repositories' index, the one apt
// transaction over every layer's packages, the repository setup, and the steps at their places.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "plan/layer_plan.h"
#include "plan/plan.h"
#include "plan/planner.h"

namespace gp::plan {

// Plans every layer, in order, from the one context (the caller sets LayerContext::earlier as it goes).
using LayerPlanner = std::function<std::vector<LayerPlan>(const LayerContext& ctx)>;

// The plan of `in`: `plan_layers` gives each layer's plan; `apply_layers` names every layer apply can
// install (the ones --only/--skip leave alone keep their pins and holds).
Plan ComposePlan(const PlanInput& in, const std::vector<std::string>& apply_layers,
                 const LayerPlanner& plan_layers);

}  // namespace gp::plan
