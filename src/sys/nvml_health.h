// A GPU's health through NVML's entry points, looked up by the GPU's PCI bus id: the probe's NVML call
// (sys/native.cc) uses it, and tests hand it stand-in functions. Private to src/sys/ and its tests.
#pragma once
#include <string>

#include "sys/native.h"
#include "sys/nvml_abi.h"

namespace gp::sys::nvml {

// Every entry point the health read uses, by its exported name; null when the library lacks it.
struct HealthCalls {
  int (*by_bus)(const char*, void**) = nullptr;  // nvmlDeviceGetHandleByPciBusId_v2
  int (*pstate)(void*, unsigned*) = nullptr;     // nvmlDeviceGetPerformanceState (nvmlPstates_t)
  int (*remapped_rows)(void*, unsigned*, unsigned*, unsigned*,
                       unsigned*) = nullptr;          // corr, unc, pending, failure
  int (*retire_pending)(void*, unsigned*) = nullptr;  // nvmlDeviceGetRetiredPagesPendingStatus
  int (*retired_pages)(void*, int, unsigned*, unsigned long long*,
                       unsigned long long*) = nullptr;               // nvmlDeviceGetRetiredPages_v2
  int (*ecc_mode)(void*, unsigned*, unsigned*) = nullptr;            // nvmlDeviceGetEccMode
  int (*ecc_total)(void*, int, int, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEccErrors
  int (*fields)(void*, int, FieldValue*) = nullptr;                  // nvmlDeviceGetFieldValues
  int (*event_reasons)(void*, unsigned long long*) = nullptr;        // ...CurrentClocksEventReasons (R535+)
  int (*throttle_reasons)(void*, unsigned long long*) = nullptr;     // ...CurrentClocksThrottleReasons
  int (*enforced_limit)(void*, unsigned*) = nullptr;                 // nvmlDeviceGetEnforcedPowerLimit
  int (*default_limit)(void*, unsigned*) = nullptr;  // nvmlDeviceGetPowerManagementDefaultLimit
  int (*persistence)(void*, unsigned*) = nullptr;    // nvmlDeviceGetPersistenceMode
};

// Fills `c` from the library handle `lib`.
void BindHealth(void* lib, HealthCalls& c);

// Asks NVML for the GPU at `pci` ("0000:18:00.0") and, when it answers with a handle, reads its health.
// NOT_SUPPORTED and every other error leave that value unset. The recovery action and the state of every
// NVLink (field NVML_FI_DEV_NVLINK_GET_STATE, one scope per link) come in one nvmlDeviceGetFieldValues call.
NvmlBusAnswer AskBus(const HealthCalls& c, const std::string& pci);

}  // namespace gp::sys::nvml
