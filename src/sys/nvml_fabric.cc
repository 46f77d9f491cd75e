// NVML's GPU fabric state calls (sys/nvml_fabric.h). Layouts and version words: sys/nvml_abi.h.
#include "sys/nvml_fabric.h"

namespace gp::sys::nvml {

void ReadFabric(const FabricCalls& f, void* dev, NvmlDevice& d) {
  auto take = [&d](int s, unsigned char state, int status) {
    if (s == kSuccess) {
      d.fabric_state = state;
      d.fabric_status = status;
    } else if (s == kNotSupported) {
      d.fabric_state = kFabricStateNotSupported;
    }
    return s;
  };
  if (f.v3) {
    GpuFabricInfoV3 info{};
    info.version = kGpuFabricInfoV3Version;
    const int s = f.v3(dev, &info);  // called before its outputs are read
    if (take(s, info.state, info.status) != kArgumentVersionMismatch || !f.v2) return;
    GpuFabricInfoV2 old{};
    old.version = kGpuFabricInfoV2Version;
    const int s2 = f.v2(dev, &old);
    take(s2, old.state, old.status);
    return;
  }
  if (f.v1) {
    GpuFabricInfo info{};
    const int s = f.v1(dev, &info);
    take(s, info.state, info.status);
  }
}

}  // namespace gp::sys::nvml
