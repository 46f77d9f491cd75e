// cudnn layer: see CheckCudaLibrary (layers/rules.h).
#include "layers/check.h"
#include "layers/rules.h"

namespace gp::layers {

LayerReport CheckCudnn(const CheckInput& in) {
  return CheckCudaLibrary(in, "cudnn", "cuDNN", in.stack.cudnn, in.host.cudnn);
}

}  // namespace gp::layers
