// nccl's verify: the stack's packages held and pinned, and NCCL loading at the pinned release
// (apply/verify.h VerifyLibrary, shared with the other CUDA library).
#include "layers/nccl/nccl.h"

namespace gp::layers {

void VerifyNccl(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  apply::PinsAndHolds(env, env.stack->nccl.packages, r);
  apply::VerifyLibrary(env, "NCCL", env.stack->nccl.version, r, true);
}

}  // namespace gp::layers
