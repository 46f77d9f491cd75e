// The driver layer's findings from the driver's own recovery verdict per GPU (NVML's recovery action, judged
// in layers/gpu/recovery.cc): in doctor's driver row, and as the driver row of doctor --health.
#include <algorithm>

#include "layers/driver/driver.h"
#include "layers/gpu/health.h"

namespace gp::layers {

void CheckRecoveryActions(const CheckInput& in, LayerReport& r) {
  for (const auto& g : in.host.gpus) {
    if (!g.health.recovery_action || *g.health.recovery_action == 0) continue;  // 0: none
    const size_t from = r.findings.size();
    if (auto a = RecoveryFor(in.host, g)) {
      r.Add("driver.recovery-action", a->status, a->message, a->fix);
      MarkGpu(r, from, g);
      continue;
    }
    const std::string n = std::to_string(*g.health.recovery_action);
    r.Add("driver.recovery-action-unknown", Status::kWarn,
          GpuLabel(g) + " reports recovery action " + n + ", a value gpuprep does not know",
          "read it with nvidia-smi -q -i " + std::to_string(g.index) +
              " and follow NVIDIA's documentation for that value");
    MarkGpu(r, from, g);
  }
}

LayerReport DriverHealth(const CheckInput& in) {
  LayerReport driver;
  driver.name = "driver";
  driver.wanted = "no recovery action";
  CheckRecoveryActions(in, driver);
  if (driver.findings.empty()) {
    const auto& gpus = in.host.gpus;
    const bool answered =
        std::any_of(gpus.begin(), gpus.end(), [](const probe::Gpu& g) { return g.nvml_status; });
    if (answered)
      driver.Add("driver.recovery-none", Status::kOk, "the driver asks no recovery action of any GPU");
    else
      driver.Add("driver.recovery-not-read", Status::kSkip,
                 "NVML did not answer for any GPU: the driver's recovery actions were not read");
  }
  return driver;
}

}  // namespace gp::layers
