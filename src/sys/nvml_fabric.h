// A GPU's NVLink fabric state through NVML's entry points, whichever the driver has: the probe's NVML call
// (sys/native.cc) uses it, and tests hand it stand-in functions. Private to src/sys/ and its tests.
#pragma once
#include "sys/native.h"
#include "sys/nvml_abi.h"

namespace gp::sys::nvml {

// nvmlDeviceGetGpuFabricInfoV takes a versioned structure (v3 or v2; the same symbol, typed per layout);
// nvmlDeviceGetGpuFabricInfo the unversioned first one.
using FabricV3Fn = int (*)(void*, GpuFabricInfoV3*);
using FabricV2Fn = int (*)(void*, GpuFabricInfoV2*);
using FabricV1Fn = int (*)(void*, GpuFabricInfo*);

struct FabricCalls {
  FabricV3Fn v3 = nullptr;
  FabricV2Fn v2 = nullptr;
  FabricV1Fn v1 = nullptr;
};

// Sets d.fabric_state and d.fabric_status from the device `dev`: the v3 layout first; a driver that predates
// it answers ARGUMENT_VERSION_MISMATCH, then v2; without the versioned symbol, the first call. NOT_SUPPORTED
// is an answer (state 0, no status); any other error, or no symbol at all, leaves both unset.
void ReadFabric(const FabricCalls& f, void* dev, NvmlDevice& d);

}  // namespace gp::sys::nvml
