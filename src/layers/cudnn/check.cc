// cudnn layer: see CheckCudaLibrary (layers/check.h, layers/library.cc).
#include "layers/check.h"

#include "layers/cudnn/cudnn.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckCudnn(const CheckInput& in) {
  LayerReport r = CheckCudaLibrary(in, "cudnn", "cuDNN", in.stack.cudnn, in.host.cudnn);
  // `source: redist`: the stack's cuDNN is gpuprep's install of NVIDIA's archive under /opt/gpuprep/cudnn;
  // a cuDNN found elsewhere (apt, a pip wheel) is not it.
  const std::string prefix = "/opt/gpuprep/cudnn/current/";
  if (in.stack.cudnn.enabled && in.stack.cudnn.source == "redist" && in.host.cudnn.found &&
      in.host.cudnn.source.find(prefix) == std::string::npos)
    r.Add("cudnn.not-redist", Status::kFail,
          "cuDNN " + in.host.cudnn.version + " comes from " + in.host.cudnn.source +
              ", not the stack's redistributable install in /opt/gpuprep/cudnn (source: redist)",
          ApplyFix("cudnn"));
  return r;
}

extern const Layer kCudnnLayer = {
    "cudnn",     CheckCudnn,
    nullptr,     PlanCudnn,
    VerifyCudnn, [](const manifest::Stack& s, const probe::HostFacts&) { return s.cudnn.enabled; }};

}  // namespace gp::layers
