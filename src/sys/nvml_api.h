// The table of NVML entry points the watch session calls, looked up by their exported (versioned) names
// (nvml.h maps nvmlInit to nvmlInit_v2, nvmlDeviceGetCount to _v2, ...; NVML_NO_UNVERSIONED_FUNC_DEFS).
// Private to src/sys/.
#pragma once
#include "sys/nvml_abi.h"

namespace gp::sys::nvml {

using Device = void*;  // nvmlDevice_t

// Every entry point used, by its exported (versioned) name. Null when the library does not export it.
struct Api {
  int (*init)() = nullptr;                         // nvmlInit_v2
  int (*shutdown)() = nullptr;                     // nvmlShutdown
  const char* (*error_string)(int) = nullptr;      // nvmlErrorString
  int (*count)(unsigned*) = nullptr;               // nvmlDeviceGetCount_v2
  int (*handle)(unsigned, Device*) = nullptr;      // nvmlDeviceGetHandleByIndex_v2
  int (*uuid)(Device, char*, unsigned) = nullptr;  // nvmlDeviceGetUUID
  int (*name)(Device, char*, unsigned) = nullptr;  // nvmlDeviceGetName
  int (*pci)(Device, nvml::PciInfo*) = nullptr;    // nvmlDeviceGetPciInfo_v3
  int (*arch)(Device, unsigned*) = nullptr;        // nvmlDeviceGetArchitecture
  int (*samples)(Device, int, unsigned long long, unsigned*, unsigned*, nvml::Sample*) = nullptr;
  int (*memory_v2)(Device, nvml::MemoryV2*) = nullptr;   // nvmlDeviceGetMemoryInfo_v2
  int (*memory)(Device, nvml::Memory*) = nullptr;        // nvmlDeviceGetMemoryInfo
  int (*power)(Device, unsigned*) = nullptr;             // nvmlDeviceGetPowerUsage
  int (*enforced_limit)(Device, unsigned*) = nullptr;    // nvmlDeviceGetEnforcedPowerLimit
  int (*default_limit)(Device, unsigned*) = nullptr;     // nvmlDeviceGetPowerManagementDefaultLimit
  int (*energy)(Device, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEnergyConsumption
  int (*clock)(Device, int, unsigned*) = nullptr;        // nvmlDeviceGetClockInfo
  int (*max_clock)(Device, int, unsigned*) = nullptr;    // nvmlDeviceGetMaxClockInfo
  int (*temperature)(Device, int, unsigned*) = nullptr;  // nvmlDeviceGetTemperature
  int (*event_reasons)(Device,
                       unsigned long long*) = nullptr;  // nvmlDeviceGetCurrentClocksEventReasons (R535+)
  int (*throttle_reasons)(Device,
                          unsigned long long*) = nullptr;     // ...ClocksThrottleReasons (deprecated 13.0)
  int (*fields)(Device, int, nvml::FieldValue*) = nullptr;    // nvmlDeviceGetFieldValues
  int (*processes)(Device, unsigned*, void*) = nullptr;       // nvmlDeviceGetComputeRunningProcesses_v3
  int (*pcie_gen)(Device, unsigned*) = nullptr;               // nvmlDeviceGetMaxPcieLinkGeneration
  int (*pcie_width)(Device, unsigned*) = nullptr;             // nvmlDeviceGetMaxPcieLinkWidth
  int (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;    // nvmlDeviceGetMigMode
  int (*mig_count)(Device, unsigned*) = nullptr;              // nvmlDeviceGetMaxMigDeviceCount
  int (*mig_handle)(Device, unsigned, Device*) = nullptr;     // nvmlDeviceGetMigDeviceHandleByIndex
  int (*gpu_instance_id)(Device, unsigned*) = nullptr;        // nvmlDeviceGetGpuInstanceId
  int (*gpm_support)(Device, nvml::GpmSupport*) = nullptr;    // nvmlGpmQueryDeviceSupport
  int (*gpm_alloc)(GpmSample*) = nullptr;                     // nvmlGpmSampleAlloc
  int (*gpm_free)(GpmSample) = nullptr;                       // nvmlGpmSampleFree
  int (*gpm_get)(Device, GpmSample) = nullptr;                // nvmlGpmSampleGet
  int (*gpm_mig_get)(Device, unsigned, GpmSample) = nullptr;  // nvmlGpmMigSampleGet
  int (*gpm_metrics)(nvml::GpmMetricsGet*) = nullptr;         // nvmlGpmMetricsGet
};

// Fills `a` from the library handle `lib`; a symbol the library does not export stays null.
void Bind(void* lib, Api& a);

}  // namespace gp::sys::nvml
