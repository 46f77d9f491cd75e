// container_toolkit's verify: a container with the stack's GPU request lists every GPU (nvidia-smi -L)
// (apply/verify_container.h, the container checks the three container layers share).
#include "apply/verify_container.h"
#include "layers/container_toolkit/container_toolkit.h"

namespace gp::layers {

void VerifyContainerToolkit(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::VerifyContainerLayer("container_toolkit", env, r);
}

}  // namespace gp::layers
