// What must hold before `gpuprep accept` measures anything: doctor's layers gpu, driver and fabricmanager
// pass (with the container runtime, docker and container_toolkit too; image never blocks, the measuring
// program pulls it), judged from doctor's layer reports. With the host runtime, the host's python3 must
// import torch and see as many GPUs as NVML (run through the command seam, bounded in time and output).
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sys/process.h"
#include "verdict/report.h"

namespace gp::accept {

// The layers the gate needs for a runtime ("container" or "host"), in order.
std::vector<std::string> GateLayers(const std::string& runtime);

// The first gate layer that failed (or, for gpu and driver, that doctor did not report), with its detail;
// nullopt when the gate holds. Another layer doctor does not show for the host does not apply to it.
struct GateFailure {
  std::string layer;
  std::string detail;
};
std::optional<GateFailure> CheckGate(const std::vector<verdict::LayerReport>& reports,
                                     const std::string& runtime);

// How long the host's `import torch` (with CUDA's first initialisation) may take, and how much of its
// output is read: gpuprep's own limits, far above what a working installation needs.
inline constexpr std::chrono::milliseconds kTorchTimeout{60000};
inline constexpr size_t kTorchOutputMax = size_t{64} * 1024;

// --runtime host: `python3 -c 'import torch; print(torch.cuda.device_count())'` must succeed and print
// `nvml_gpus`. A failure is the layer "torch" with what went wrong (not found, failed with its last error
// line, timed out, too much output, no count, another count).
std::optional<GateFailure> CheckHostTorch(sys::CommandRunner& runner, int nvml_gpus,
                                          std::chrono::milliseconds timeout = kTorchTimeout);

}  // namespace gp::accept
