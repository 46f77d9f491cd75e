// docker's verify: the engine answers, at least at the floor of the stack's GPU access (verdict/rules.h, the
// rule doctor and the plan judge it by).
#include "apply/verify_container.h"
#include "layers/docker/docker.h"
#include "verdict/rules.h"

namespace gp::layers {

void VerifyDocker(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::EngineAnswer a = apply::AskEngine(env);
  if (apply::AddNoEngine(a, r)) return;
  const std::string& gpu_access = env.stack->docker.gpu_access;
  r.found = a.version->version;
  r.wanted = verdict::DockerGpuFloor(gpu_access).wanted;
  if (auto below = verdict::DockerBelowFloor(a.version->version, gpu_access))
    return r.Add(verdict::Status::kFail, *below,
                 "upgrade Docker Engine (gpuprep leaves an installed engine alone)");
  r.Add(verdict::Status::kOk, "Docker " + a.version->version + " answers on its socket");
}

}  // namespace gp::layers
