// What must hold before `gpuprep accept` measures anything: doctor's layers gpu, driver and fabricmanager
// pass (with the container runtime, docker and container_toolkit too; image never blocks, the measuring
// program pulls it). Pure: judged from doctor's layer reports.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "verdict/report.h"

namespace gp::accept {

// The layers the gate needs for a runtime ("container" or "host"), in order.
std::vector<std::string> GateLayers(const std::string& runtime);

// The first gate layer that failed (or that doctor did not report), with its detail; nullopt when the gate
// holds.
struct GateFailure {
  std::string layer;
  std::string detail;
};
std::optional<GateFailure> CheckGate(const std::vector<verdict::LayerReport>& reports,
                                     const std::string& runtime);

}  // namespace gp::accept
