// cudnn's verify: the stack's packages held and pinned, and cuDNN loading at the pinned release
// (apply/verify.h VerifyLibrary, shared with the other CUDA library).
#include "layers/cudnn/cudnn.h"

namespace gp::layers {

void VerifyCudnn(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::PinsAndHolds(env, env.stack->cudnn.packages, r);
  apply::VerifyLibrary(env, "cuDNN", env.stack->cudnn.version, r, false);
}

}  // namespace gp::layers
