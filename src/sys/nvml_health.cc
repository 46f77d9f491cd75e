// A GPU's health through NVML (sys/nvml_health.h). Layouts and values: sys/nvml_abi.h.
#include "sys/nvml_health.h"

#include "sys/dl.h"

namespace gp::sys::nvml {
namespace {

void ReadMemory(const HealthCalls& c, void* dev, NvmlHealth& h) {
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  if (c.remapped_rows && c.remapped_rows(dev, &corr, &unc, &pending, &failure) == kSuccess) {
    h.remap_pending = pending != 0;
    h.remap_failure = failure != 0;
  }
  unsigned state = 0;
  if (c.retire_pending && c.retire_pending(dev, &state) == kSuccess)
    h.retire_pending = state == kFeatureEnabled;
  unsigned count = 0;  // 0: asks for the count only (INSUFFICIENT_SIZE when there are pages)
  if (c.retired_pages) {
    const int s = c.retired_pages(dev, kRetiredDoubleBitEcc, &count, nullptr, nullptr);
    if (s == kSuccess || s == kInsufficientSize) h.retired_dbe_pages = count;
  }
  unsigned current = 0, pending_mode = 0;
  if (c.ecc_mode && c.ecc_mode(dev, &current, &pending_mode) == kSuccess)
    h.ecc_enabled = current == kFeatureEnabled;
  unsigned long long n = 0;
  if (c.ecc_total && c.ecc_total(dev, kMemoryErrorUncorrected, kVolatileEcc, &n) == kSuccess)
    h.ecc_volatile_uncorrected = n;
  if (c.ecc_total && c.ecc_total(dev, kMemoryErrorUncorrected, kAggregateEcc, &n) == kSuccess)
    h.ecc_aggregate_uncorrected = n;
}

void ReadClocks(const HealthCalls& c, void* dev, NvmlHealth& h) {
  unsigned long long reasons = 0;
  if (c.event_reasons && c.event_reasons(dev, &reasons) == kSuccess)
    h.clock_reasons = reasons;
  else if (!c.event_reasons && c.throttle_reasons && c.throttle_reasons(dev, &reasons) == kSuccess)
    h.clock_reasons = reasons;
  unsigned mw = 0;
  if (c.enforced_limit && c.enforced_limit(dev, &mw) == kSuccess) h.power_limit_mw = mw;
  if (c.default_limit && c.default_limit(dev, &mw) == kSuccess) h.power_default_mw = mw;
  unsigned pstate = 0;
  if (c.pstate && c.pstate(dev, &pstate) == kSuccess) h.pstate = pstate;
  unsigned mode = 0;
  if (c.persistence && c.persistence(dev, &mode) == kSuccess) h.persistence = mode == kFeatureEnabled;
}

// One nvmlDeviceGetFieldValues call: the recovery action, then the state of each possible link (a link the
// board lacks answers an error in its own entry).
void ReadHealthFields(const HealthCalls& c, void* dev, NvmlHealth& h) {
  if (!c.fields) return;
  FieldValue v[1 + kNvlinkMaxLinks] = {};
  v[0].field_id = kFiGpuRecoveryAction;
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    v[1 + link].field_id = kFiNvlinkGetState;
    v[1 + link].scope_id = link;
  }
  if (c.fields(dev, static_cast<int>(1 + kNvlinkMaxLinks), v) != kSuccess) return;
  auto number = [](const FieldValue& f) {
    return f.value_type == kUnsignedLongLong ? static_cast<unsigned>(f.value.ull) : f.value.ui;
  };
  if (v[0].nvml_return == kSuccess) h.recovery_action = number(v[0]);
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    const FieldValue& f = v[1 + link];
    if (f.nvml_return != kSuccess) continue;
    h.nvlinks = h.nvlinks.value_or(0) + 1;
    if (number(f) != kFeatureEnabled) h.nvlinks_down.push_back(link);
  }
}

}  // namespace

void BindHealth(void* lib, HealthCalls& c) {
  DlBind(lib, "nvmlDeviceGetHandleByPciBusId_v2", c.by_bus);
  DlBind(lib, "nvmlDeviceGetPerformanceState", c.pstate);
  DlBind(lib, "nvmlDeviceGetRemappedRows", c.remapped_rows);
  DlBind(lib, "nvmlDeviceGetRetiredPagesPendingStatus", c.retire_pending);
  DlBind(lib, "nvmlDeviceGetRetiredPages_v2", c.retired_pages);
  DlBind(lib, "nvmlDeviceGetEccMode", c.ecc_mode);
  DlBind(lib, "nvmlDeviceGetTotalEccErrors", c.ecc_total);
  DlBind(lib, "nvmlDeviceGetFieldValues", c.fields);
  DlBind(lib, "nvmlDeviceGetCurrentClocksEventReasons", c.event_reasons);
  DlBind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", c.throttle_reasons);
  DlBind(lib, "nvmlDeviceGetEnforcedPowerLimit", c.enforced_limit);
  DlBind(lib, "nvmlDeviceGetPowerManagementDefaultLimit", c.default_limit);
  DlBind(lib, "nvmlDeviceGetPersistenceMode", c.persistence);
}

NvmlBusAnswer AskBus(const HealthCalls& c, const std::string& pci) {
  NvmlBusAnswer a;
  a.pci = pci;
  if (!c.by_bus) {
    a.status = kFunctionNotFound;
    return a;
  }
  void* dev = nullptr;
  a.status = c.by_bus(pci.c_str(), &dev);
  if (a.status != kSuccess) return a;
  ReadClocks(c, dev, a.health);
  ReadMemory(c, dev, a.health);
  ReadHealthFields(c, dev, a.health);
  return a;
}

}  // namespace gp::sys::nvml
