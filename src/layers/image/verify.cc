// image's verify: the image's torch sees every GPU (apply/verify_container.h, the container checks the three
// container layers share).
#include "apply/verify_container.h"
#include "layers/image/image.h"

namespace gp::layers {

void VerifyImage(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::VerifyContainerLayer("image", env, r);
}

}  // namespace gp::layers
