// Active verification, after each layer in apply and as `gpuprep verify`: the loaded kernel
// module and NVML agree, NVML counts as many GPUs as PCI shows, CUDA initialises (cuInit + cuDeviceGetCount
// through dlopen of libcuda), the CUDA toolkit is there at the pinned major.minor (version.json and its
// libcudart), cuDNN and NCCL load at the pinned versions. Nothing is executed.
#pragma once
#include <string>
#include <vector>

#include "layers/report.h"
#include "manifest/model.h"
#include "probe/host.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"

namespace gp::apply {

struct VerifyEnv {
  const sys::Fs* fs = nullptr;
  sys::NativeLibs* native = nullptr;  // null (--root): library checks are `skip`
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;  // PCI GPUs, NVSwitches
  sys::UnixHttp* docker = nullptr;          // the Engine API (container checks); null (--root): `skip`
};

// One layer's verdict; status fail carries the fix.
layers::LayerReport VerifyLayer(const std::string& layer, const VerifyEnv& env);

}  // namespace gp::apply
