// docker's verify: the engine answers at a version that can give containers GPUs (apply/verify_container.h,
// the container checks the three container layers share).
#include "apply/verify_container.h"
#include "layers/docker/docker.h"

namespace gp::layers {

void VerifyDocker(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::VerifyContainerLayer("docker", env, r);
}

}  // namespace gp::layers
