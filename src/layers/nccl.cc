// nccl layer: see CheckCudaLibrary (layers/rules.h).
#include "layers/check.h"
#include "layers/rules.h"

namespace gp::layers {

LayerReport CheckNccl(const CheckInput& in) {
  return CheckCudaLibrary(in, "nccl", "NCCL", in.stack.nccl, in.host.nccl);
}

}  // namespace gp::layers
