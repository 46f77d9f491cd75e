#include "layers/plan.h"

#include <algorithm>

#include "layers/table.h"
#include "plan/compose.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::layers {

plan::Plan BuildPlan(const plan::PlanInput& in) {
  return plan::ComposePlan(in, ApplyLayers(), [](const plan::LayerContext& ctx) {
    std::vector<plan::LayerPlan> plans;
    plans.reserve(Layers().size());
    plan::LayerContext at = ctx;
    at.earlier = &plans;
    for (const Layer& l : Layers())
      if (l.plan) plans.push_back(l.plan(at));
    return plans;
  });
}

std::vector<std::string> ParseLayerList(const std::string& flag, const std::vector<std::string>& items) {
  const auto& known = ApplyLayers();
  std::vector<std::string> out;
  for (const auto& item : items) {
    for (const auto& raw : Split(item, ',')) {
      std::string name(Trim(raw));
      if (name.empty()) continue;
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        if (FindLayer(name))  // os, host, gpu: doctor checks them, nothing installs them
          throw FlagError(flag, "layer \"" + name + "\" is checked by doctor but installs nothing (layers: " +
                                    Join(known, ", ") + ")");
        if (auto guess = DidYouMean(name, known))
          throw FlagError(flag, "unknown layer \"" + name + "\" (did you mean \"" + *guess + "\"?)");
        throw FlagError(flag, "unknown layer \"" + name + "\" (layers: " + Join(known, ", ") + ")");
      }
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

}  // namespace gp::layers
