// nccl layer: see CheckCudaLibrary (layers/check.h, layers/library.cc).
#include "layers/check.h"

#include "layers/nccl/nccl.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckNccl(const CheckInput& in) {
  return CheckCudaLibrary(in, "nccl", "NCCL", in.stack.nccl, in.host.nccl);
}

extern const Layer kNcclLayer = {
    "nccl",   CheckNccl,  nullptr,
    PlanNccl, VerifyNccl, [](const manifest::Stack& s, const probe::HostFacts&) { return s.nccl.enabled; }};

}  // namespace gp::layers
