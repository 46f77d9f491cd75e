// nccl layer: see CheckCudaLibrary (layers/rules.h).
#include "layers/check.h"
#include "layers/rules.h"
#include "layers/table.h"

namespace gp::layers {

LayerReport CheckNccl(const CheckInput& in) {
  return CheckCudaLibrary(in, "nccl", "NCCL", in.stack.nccl, in.host.nccl);
}

extern const Layer kNcclLayer = {
    "nccl", CheckNccl, nullptr, true,
    [](const manifest::Stack& s, const probe::HostFacts&) { return s.nccl.enabled; }};

}  // namespace gp::layers
