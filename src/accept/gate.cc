#include "accept/gate.h"

namespace gp::accept {

std::vector<std::string> GateLayers(const std::string& runtime) {
  std::vector<std::string> layers{"gpu", "driver", "fabricmanager"};
  if (runtime == "container") {
    layers.emplace_back("docker");
    layers.emplace_back("container_toolkit");
  }
  return layers;
}

std::optional<GateFailure> CheckGate(const std::vector<verdict::LayerReport>& reports,
                                     const std::string& runtime) {
  for (const auto& name : GateLayers(runtime)) {
    const verdict::LayerReport* found = nullptr;
    for (const auto& r : reports)
      if (r.name == name) found = &r;
    if (!found) return GateFailure{name, "doctor did not check this layer"};
    if (found->status == verdict::Status::kFail) return GateFailure{name, found->detail};
  }
  return std::nullopt;
}

}  // namespace gp::accept
