#include "sys/nvml_api.h"

#include "sys/dl.h"

namespace gp::sys::nvml {

void Bind(void* lib, Api& a) {
  DlBind(lib, "nvmlInit_v2", a.init);
  DlBind(lib, "nvmlShutdown", a.shutdown);
  DlBind(lib, "nvmlErrorString", a.error_string);
  DlBind(lib, "nvmlDeviceGetCount_v2", a.count);
  DlBind(lib, "nvmlDeviceGetHandleByIndex_v2", a.handle);
  DlBind(lib, "nvmlDeviceGetUUID", a.uuid);
  DlBind(lib, "nvmlDeviceGetName", a.name);
  DlBind(lib, "nvmlDeviceGetPciInfo_v3", a.pci);
  DlBind(lib, "nvmlDeviceGetArchitecture", a.arch);
  DlBind(lib, "nvmlDeviceGetSamples", a.samples);
  DlBind(lib, "nvmlDeviceGetMemoryInfo_v2", a.memory_v2);
  DlBind(lib, "nvmlDeviceGetMemoryInfo", a.memory);
  DlBind(lib, "nvmlDeviceGetPowerUsage", a.power);
  DlBind(lib, "nvmlDeviceGetEnforcedPowerLimit", a.enforced_limit);
  DlBind(lib, "nvmlDeviceGetPowerManagementDefaultLimit", a.default_limit);
  DlBind(lib, "nvmlDeviceGetTotalEnergyConsumption", a.energy);
  DlBind(lib, "nvmlDeviceGetClockInfo", a.clock);
  DlBind(lib, "nvmlDeviceGetMaxClockInfo", a.max_clock);
  DlBind(lib, "nvmlDeviceGetTemperature", a.temperature);
  DlBind(lib, "nvmlDeviceGetCurrentClocksEventReasons", a.event_reasons);
  DlBind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", a.throttle_reasons);
  DlBind(lib, "nvmlDeviceGetFieldValues", a.fields);
  DlBind(lib, "nvmlDeviceGetComputeRunningProcesses_v3", a.processes);
  DlBind(lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.pcie_gen);
  DlBind(lib, "nvmlDeviceGetMaxPcieLinkWidth", a.pcie_width);
  DlBind(lib, "nvmlDeviceGetMigMode", a.mig_mode);
  DlBind(lib, "nvmlDeviceGetMaxMigDeviceCount", a.mig_count);
  DlBind(lib, "nvmlDeviceGetMigDeviceHandleByIndex", a.mig_handle);
  DlBind(lib, "nvmlDeviceGetGpuInstanceId", a.gpu_instance_id);
  DlBind(lib, "nvmlGpmQueryDeviceSupport", a.gpm_support);
  DlBind(lib, "nvmlGpmSampleAlloc", a.gpm_alloc);
  DlBind(lib, "nvmlGpmSampleFree", a.gpm_free);
  DlBind(lib, "nvmlGpmSampleGet", a.gpm_get);
  DlBind(lib, "nvmlGpmMigSampleGet", a.gpm_mig_get);
  DlBind(lib, "nvmlGpmMetricsGet", a.gpm_metrics);
}

}  // namespace gp::sys::nvml
