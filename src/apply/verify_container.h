// The container checks of `verify` (and of apply after the container layers): the engine answers at a
// version that can give containers GPUs; a container with the stack's GPU request lists every GPU with
// `nvidia-smi -L`; the image's torch sees them all. The image must be present: verify never pulls.
// The classic failures are named with their fix (Diagnosis, below).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "apply/verify.h"
#include "docker/engine.h"
#include "manifest/model.h"
#include "verdict/report.h"

namespace gp::apply {

// A container of `image` running `cmd` with every GPU, requested the way the stack's docker.gpu_access says
// (the nvidia runtime's --gpus all, or CDI's nvidia.com/gpu=all): verify's checks and accept's measurement.
docker::ContainerRun StackGpuRun(const manifest::Stack& s, const std::string& image,
                                 std::vector<std::string> cmd);

void VerifyContainerLayer(const std::string& layer, const VerifyEnv& env, verdict::LayerReport& r);

struct Diagnosis {
  std::string what;  // "Docker does not know the nvidia runtime"
  std::string fix;
};
// What an engine or container error means, for the errors first boots hit most; nullopt for others.
std::optional<Diagnosis> DiagnoseContainerError(const std::string& message);

}  // namespace gp::apply
