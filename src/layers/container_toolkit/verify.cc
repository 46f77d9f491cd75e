// container_toolkit's verify: a container with the stack's GPU request lists every GPU (`nvidia-smi -L`),
// with the kit of apply/verify_container.h.
#include "apply/verify_container.h"
#include "layers/container_toolkit/container_toolkit.h"
#include "util/strings.h"

namespace gp::layers {

void VerifyContainerToolkit(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  using verdict::Status;
  const manifest::Stack& s = *env.stack;
  apply::EngineAnswer a = apply::AskEngine(env);
  // A stack that does not set Docker up (no docker: section) may serve another container engine: without a
  // Docker engine the toolkit's packages are what there is to verify (apply checked and held them).
  if (a.engine && !a.version && !s.docker.present)
    return r.Add(Status::kSkip, "no Docker engine here and stack " + s.name +
                                    " does not set one up: the runtime registration is not checked");
  if (apply::AddNoEngine(a, r)) return;
  auto image = apply::StackImagePresent(*a.engine, s, r);
  if (!image) return;
  auto res = a.engine->Run(apply::StackGpuRun(s, image->ref, {"nvidia-smi", "-L"}));
  if (!res.ran || res.exit_code != 0) return apply::AddRunFailure(res, "nvidia-smi -L in a container", r);
  size_t listed = 0;
  for (const auto& line : Split(res.out, '\n')) listed += StartsWith(Trim(line), "GPU ");
  const size_t gpus = env.facts ? env.facts->gpus.size() : 0;
  r.found = std::to_string(listed) + " GPUs in a container";
  if (listed != gpus)
    return r.Add(
        Status::kFail,
        "a container lists " + std::to_string(listed) + " GPUs but the host has " + std::to_string(gpus),
        "gpuprep doctor (check the driver layer and NVIDIA_VISIBLE_DEVICES)");
  r.Add(Status::kOk, "a container sees every GPU (" + std::to_string(listed) + ", nvidia-smi -L)");
}

}  // namespace gp::layers
