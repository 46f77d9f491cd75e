#include "layers/check.h"

namespace gp::layers {

std::vector<LayerReport> CheckAll(const CheckInput& in) {
  std::vector<LayerReport> out;
  out.push_back(CheckStack(in));
  out.push_back(CheckOs(in));
  out.push_back(CheckHost(in));
  out.push_back(CheckGpu(in));
  out.push_back(CheckDriver(in));
  if (in.host.nvswitch_count > 0) out.push_back(CheckFabricManager(in));
  out.push_back(CheckCuda(in));
  out.push_back(CheckCudnn(in));
  out.push_back(CheckNccl(in));
  out.push_back(CheckDocker(in));
  out.push_back(CheckContainerToolkit(in));
  out.push_back(CheckImage(in));
  return out;
}

}  // namespace gp::layers
