// OpenNvmlSession: sys/nvml_session.h over libnvidia-ml.so.1. Signatures and semantics from nvml.h
// (public copy: github.com/NVIDIA/go-nvml gen/nvml/nvml.h); layouts in sys/nvml_abi.h.
#include "sys/nvml_session.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sys/deadline_worker.h"
#include "sys/dl.h"
#include "sys/nvml_abi.h"
#include "sys/nvml_api.h"
#include "sys/nvml_processes.h"
#include "util/input.h"

namespace gp::sys {
namespace {

using nvml::Api;
using nvml::Device;
using nvml::GpmSample;

int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Two GPM samples per scope (the whole GPU or one MIG instance): the previous one is the baseline of the
// next span. NVML asks for more than 100 ms between the two ("due to the internal sample refresh rate").
struct GpmPair {
  unsigned gpu_instance_id = 0;  // for MIG instances
  GpmSample previous = nullptr, current = nullptr;
  bool have_previous = false;
  std::chrono::steady_clock::time_point previous_at;
};
constexpr auto kGpmMinSpan = std::chrono::milliseconds(101);
constexpr auto kGpmMaxWait = std::chrono::milliseconds(15);

// The per-tick field batch (one nvmlDeviceGetFieldValues per GPU per tick). A field that answers
// NOT_SUPPORTED is not asked again.
struct FieldSlot {
  unsigned id;
  unsigned scope;
  std::optional<NvmlCounter> NvmlReading::*target;
};
const FieldSlot kTickFields[] = {
    {nvml::kFiPcieCountTxBytes, 0, &NvmlReading::pcie_tx_bytes},
    {nvml::kFiPcieCountRxBytes, 0, &NvmlReading::pcie_rx_bytes},
    {nvml::kFiNvlinkThroughputDataTx, nvml::kScopeAllLinks, &NvmlReading::nvlink_tx_kib},
    {nvml::kFiNvlinkThroughputDataRx, nvml::kScopeAllLinks, &NvmlReading::nvlink_rx_kib},
    {nvml::kFiPerfPolicyPower, 0, &NvmlReading::power_cap_ns},
    {nvml::kFiPerfPolicySyncBoost, 0, &NvmlReading::sync_boost_ns},
    {nvml::kFiSwThermSlowdownNs, 0, &NvmlReading::sw_thermal_ns},
    {nvml::kFiHwThermSlowdownNs, 0, &NvmlReading::hw_thermal_ns},
    {nvml::kFiHwPowerBrakeSlowdownNs, 0, &NvmlReading::hw_power_brake_ns},
};

std::optional<uint64_t> Unsigned(const nvml::FieldValue& f, unsigned* bits) {
  switch (f.value_type) {
    case nvml::kUnsignedInt:
      *bits = 32;
      return f.value.ui;
    case nvml::kUnsignedLong:
      *bits = 8 * sizeof(unsigned long);
      return f.value.ul;
    case nvml::kUnsignedLongLong:
      *bits = 64;
      return f.value.ull;
    case nvml::kUnsignedShort:
      *bits = 16;
      return f.value.us;
    case nvml::kSignedLongLong:
      *bits = 63;
      return f.value.sll < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(f.value.sll));
    case nvml::kSignedInt:
      *bits = 31;
      return f.value.si < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(f.value.si));
    default:
      return std::nullopt;  // a double is no counter
  }
}

struct Dev {
  Device handle = nullptr;
  NvmlGpu info;
  uint64_t memory_total = 0;
  std::atomic<bool> lost{false};
  DeadlineWorker worker;
  // Owned by the worker thread (only its tasks touch these):
  unsigned long long duty_last_seen = 0;
  std::vector<nvml::Sample> duty_buffer;
  bool memory_v2_ok = true;
  std::vector<nvml::FieldValue> fields;  // the batch still asked
  std::vector<const FieldSlot*> field_slots;
  std::vector<uint8_t> process_buffer;
  unsigned process_capacity = 16;
  std::vector<GpmPair> gpm;  // [0] = whole GPU without MIG; one per instance with MIG
};

// Marks the GPU lost on GPU_IS_LOST; true once it is.
bool Lost(Dev& d, int status) {
  if (status == nvml::kGpuIsLost) d.lost = true;
  return d.lost;
}

// What the worker threads read: shared with every task, so a task still running after the session is
// gone (a stuck call) never touches freed memory.
struct Shared {
  Api api;
  NvmlSessionOptions options;
};

void ReadOne(const Shared& sh, Dev& d, NvmlReading& r);

class Session : public NvmlSession {
 public:
  Session(const Api& api, NvmlSessionOptions options)
      : sh_(std::make_shared<Shared>(Shared{api, std::move(options)})), api_(sh_->api) {}
  ~Session() override { Session::Close(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::string Text(int status) const {
    const char* s = api_.error_string ? api_.error_string(status) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(status);
  }

  // Runs on the open worker: init, count, handles, fixed facts. "" or the error.
  std::string OpenDevices();
  const std::vector<NvmlGpu>& Gpus() const override { return gpus_; }
  std::vector<NvmlReading> Read(const std::vector<size_t>& positions,
                                std::chrono::steady_clock::time_point deadline) override;
  void Close() override;

 private:
  void Facts(Dev& d);
  void IdentityFacts(Dev& d);
  void NvlinkFacts(Dev& d);
  void MigFacts(Dev& d);
  void GpmFacts(Dev& d);
  void DutyBaseline(Dev& d);
  std::optional<unsigned> ActiveNvlinks(Device handle, unsigned links);

  std::shared_ptr<const Shared> sh_;
  const Api& api_;
  std::vector<std::shared_ptr<Dev>> devs_;
  std::vector<NvmlGpu> gpus_;
  bool initialised_ = false;
  bool closed_ = false;
};

std::string Session::OpenDevices() {
  if (!api_.init) return "nvmlInit_v2 is not exported by libnvidia-ml.so.1";
  if (int s = api_.init(); s != nvml::kSuccess) return "nvmlInit_v2: " + Text(s);
  initialised_ = true;
  unsigned n = 0;
  if (!api_.count || !api_.handle) return "nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2 is missing";
  if (int s = api_.count(&n); s != nvml::kSuccess) return "nvmlDeviceGetCount_v2: " + Text(s);
  for (unsigned i = 0; i < n && i < 256; ++i) {
    auto d = std::make_shared<Dev>();
    d->info.index = i;
    if (int s = api_.handle(i, &d->handle); s != nvml::kSuccess) {
      if (s == nvml::kGpuIsLost) d->lost = true;  // listed, but lost before the first sample
      d->handle = nullptr;
    }
    if (d->handle) Facts(*d);
    gpus_.push_back(d->info);
    devs_.push_back(std::move(d));
  }
  return "";
}

// The links whose state (field 165, scopeId = the link) is active, as NCCL reads them on SM 9.0 and newer
// (github.com/NVIDIA/nccl, src/graph/xml.cc); unset when no link answers.
std::optional<unsigned> Session::ActiveNvlinks(Device handle, unsigned links) {
  constexpr unsigned kMaxLinks = 64;
  if (links == 0 || !api_.fields) return std::nullopt;
  std::vector<nvml::FieldValue> f(std::min(links, kMaxLinks));
  for (unsigned l = 0; l < f.size(); ++l) {
    f[l].field_id = nvml::kFiNvlinkGetState;
    f[l].scope_id = l;
  }
  if (api_.fields(handle, static_cast<int>(f.size()), f.data()) != nvml::kSuccess) return std::nullopt;
  std::optional<unsigned> active;
  for (const nvml::FieldValue& v : f) {
    unsigned bits = 0;
    if (v.nvml_return != nvml::kSuccess) continue;
    if (auto state = Unsigned(v, &bits)) active = active.value_or(0) + (*state == 1 ? 1 : 0);  // ENABLED
  }
  return active;
}

void Session::Facts(Dev& d) {
  IdentityFacts(d);
  NvlinkFacts(d);
  if (nvml::Memory m{}; api_.memory && api_.memory(d.handle, &m) == nvml::kSuccess) d.memory_total = m.total;
  MigFacts(d);
  GpmFacts(d);
  DutyBaseline(d);
}

// The fixed facts that name the GPU and its bounds: UUID, name, PCI address, architecture, default power
// limit, top SM clock, PCIe generation and width.
void Session::IdentityFacts(Dev& d) {
  char buf[96];
  NvmlGpu& g = d.info;
  if (api_.uuid && api_.uuid(d.handle, buf, sizeof buf) == nvml::kSuccess)
    g.uuid = ReplaceInvalidUtf8(std::string_view(buf, strnlen(buf, sizeof buf)));  // printed in UTF-8 records
  if (api_.name && api_.name(d.handle, buf, sizeof buf) == nvml::kSuccess)
    g.name = ReplaceInvalidUtf8(std::string_view(buf, strnlen(buf, sizeof buf)));
  if (nvml::PciInfo p{}; api_.pci && api_.pci(d.handle, &p) == nvml::kSuccess) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%04x:%02x:%02x.0", p.domain & 0xffffu, p.bus & 0xffu, p.device & 0x1fu);
    g.pci_bus_id = addr;
  }
  if (unsigned a = 0; api_.arch && api_.arch(d.handle, &a) == nvml::kSuccess && a != nvml::kArchUnknown)
    g.architecture = a;
  if (unsigned v = 0; api_.default_limit && api_.default_limit(d.handle, &v) == nvml::kSuccess)
    g.power_default_limit_mw = v;
  if (unsigned v = 0; api_.max_clock && api_.max_clock(d.handle, nvml::kClockSm, &v) == nvml::kSuccess)
    g.sm_clock_max_mhz = v;
  if (unsigned v = 0; api_.pcie_gen && api_.pcie_gen(d.handle, &v) == nvml::kSuccess)
    g.pcie_max_generation = v;
  if (unsigned v = 0; api_.pcie_width && api_.pcie_width(d.handle, &v) == nvml::kSuccess)
    g.pcie_max_width = v;
}

// NVLink speed and link count, the links active, and the per-tick field batch (asked only where
// nvmlDeviceGetFieldValues is exported).
void Session::NvlinkFacts(Dev& d) {
  NvmlGpu& g = d.info;
  if (api_.fields) {
    nvml::FieldValue f[2]{};
    f[0].field_id = nvml::kFiNvlinkSpeedMbpsCommon;
    f[1].field_id = nvml::kFiNvlinkLinkCount;
    if (api_.fields(d.handle, 2, f) == nvml::kSuccess) {
      unsigned bits = 0;
      if (f[0].nvml_return == nvml::kSuccess)
        if (auto v = Unsigned(f[0], &bits)) g.nvlink_speed_mbps = static_cast<unsigned>(*v);
      if (f[1].nvml_return == nvml::kSuccess)
        if (auto v = Unsigned(f[1], &bits)) g.nvlink_links = static_cast<unsigned>(*v);
    }
    g.nvlink_active_links = ActiveNvlinks(d.handle, g.nvlink_links.value_or(0));
    for (const FieldSlot& slot : kTickFields) {
      nvml::FieldValue v{};
      v.field_id = slot.id;
      v.scope_id = slot.scope;
      d.fields.push_back(v);
      d.field_slots.push_back(&slot);
    }
  }
}

// MIG mode, and with it the GPU instances there are (sorted, each once).
void Session::MigFacts(Dev& d) {
  NvmlGpu& g = d.info;
  if (unsigned cur = 0, pending = 0;
      api_.mig_mode && api_.mig_mode(d.handle, &cur, &pending) == nvml::kSuccess) {
    g.mig_enabled = cur == 1;
  }
  if (g.mig_enabled.value_or(false) && api_.mig_count && api_.mig_handle && api_.gpu_instance_id) {
    unsigned count = 0;
    if (api_.mig_count(d.handle, &count) == nvml::kSuccess) {
      for (unsigned i = 0; i < count && i < 64; ++i) {
        Device mig = nullptr;
        unsigned gi = 0;
        if (api_.mig_handle(d.handle, i, &mig) != nvml::kSuccess) continue;  // NOT_FOUND: no instance there
        if (api_.gpu_instance_id(mig, &gi) != nvml::kSuccess) continue;
        if (std::find(g.gpu_instance_ids.begin(), g.gpu_instance_ids.end(), gi) == g.gpu_instance_ids.end())
          g.gpu_instance_ids.push_back(gi);
      }
      std::sort(g.gpu_instance_ids.begin(), g.gpu_instance_ids.end());
    }
  }
}

// GPM support, and a pair of samples per scope (the whole GPU, or each GPU instance under MIG). Support is
// queried with the raw version 1 (go-nvml PR 176); ARGUMENT_VERSION_MISMATCH or NOT_SUPPORTED mean no GPM
// (gpud PR 450 treats the former as unsupported too).
void Session::GpmFacts(Dev& d) {
  NvmlGpu& g = d.info;
  nvml::GpmSupport support{};
  support.version = nvml::kGpmSupportVersion;
  if (api_.gpm_support && api_.gpm_alloc && api_.gpm_free && api_.gpm_metrics &&
      api_.gpm_support(d.handle, &support) == nvml::kSuccess && support.is_supported_device) {
    auto add = [&](unsigned gi) {
      GpmPair p;
      p.gpu_instance_id = gi;
      if (api_.gpm_alloc(&p.previous) != nvml::kSuccess) return false;
      if (api_.gpm_alloc(&p.current) != nvml::kSuccess) {
        api_.gpm_free(p.previous);
        return false;
      }
      d.gpm.push_back(p);
      return true;
    };
    if (!g.mig_enabled.value_or(false))
      g.gpm_supported = api_.gpm_get && add(0);
    else if (api_.gpm_mig_get) {
      for (unsigned gi : g.gpu_instance_ids) g.gpm_supported = add(gi) || g.gpm_supported;
    }
  }
}

// The duty-cycle buffer: sized by asking with a null buffer (nvmlDeviceGetSamples' documented way),
// at most 4096 entries; the first call's samples are stale (lastSeen 0 returns the whole ring buffer)
// and only set the baseline.
void Session::DutyBaseline(Dev& d) {
  unsigned cap = 0, type = 0;
  if (api_.samples &&
      api_.samples(d.handle, nvml::kGpuUtilizationSamples, 0, &type, &cap, nullptr) == nvml::kSuccess)
    d.duty_buffer.resize(std::clamp(cap, 16u, 4096u));
  else
    d.duty_buffer.resize(128);
  if (api_.samples) {
    unsigned count = static_cast<unsigned>(d.duty_buffer.size());
    if (api_.samples(d.handle, nvml::kGpuUtilizationSamples, 0, &type, &count, d.duty_buffer.data()) ==
        nvml::kSuccess)
      for (unsigned i = 0; i < count && i < d.duty_buffer.size(); ++i)
        d.duty_last_seen = std::max(d.duty_last_seen, d.duty_buffer[i].time_stamp);
  }
  if (d.duty_last_seen == 0) d.duty_last_seen = static_cast<unsigned long long>(WallMicros());
}

void ReadDuty(const Api& api, Dev& d, NvmlReading& r) {
  if (!api.samples) return;
  unsigned type = 0;
  unsigned count = static_cast<unsigned>(d.duty_buffer.size());
  int s = api.samples(d.handle, nvml::kGpuUtilizationSamples, d.duty_last_seen, &type, &count,
                      d.duty_buffer.data());
  if (Lost(d, s)) return;
  if (s == nvml::kNotFound) {  // the ring buffer runs dry while no kernel runs
                               // (polarsignals/gpu-metrics-agent PR 37)
    r.duty_supported = true;
    r.duty_buffer_empty = true;
    return;
  }
  if (s != nvml::kSuccess) return;  // NOT_SUPPORTED on MIG-enabled GPUs (nvml.h)
  r.duty_supported = true;
  unsigned long long newest = d.duty_last_seen;
  for (unsigned i = 0; i < count && i < d.duty_buffer.size(); ++i) {
    const nvml::Sample& x = d.duty_buffer[i];
    if (x.time_stamp <= d.duty_last_seen) continue;  // "only samples with timestamp greater than lastSeen"
    newest = std::max(newest, x.time_stamp);
    r.duty_pct.push_back(type == nvml::kUnsignedLongLong
                             ? static_cast<unsigned>(std::min<unsigned long long>(x.value.ull, 100))
                         : type == nvml::kDouble ? static_cast<unsigned>(std::clamp(x.value.d, 0.0, 100.0))
                                                 : std::min(x.value.ui, 100u));
  }
  d.duty_last_seen = newest;
  if (r.duty_pct.empty()) r.duty_buffer_empty = true;
}

void ReadFields(const Api& api, Dev& d, NvmlReading& r) {
  if (!api.fields || d.fields.empty()) return;
  for (auto& f : d.fields) {  // in: field and scope ids; everything else zeroed
    const unsigned id = f.field_id, scope = f.scope_id;
    f = nvml::FieldValue{};
    f.field_id = id;
    f.scope_id = scope;
  }
  int s = api.fields(d.handle, static_cast<int>(d.fields.size()), d.fields.data());
  if (Lost(d, s) || s != nvml::kSuccess) return;
  std::vector<nvml::FieldValue> keep;
  std::vector<const FieldSlot*> keep_slots;
  for (size_t i = 0; i < d.fields.size(); ++i) {
    const nvml::FieldValue& f = d.fields[i];
    if (f.nvml_return == nvml::kGpuIsLost) d.lost = true;
    if (f.nvml_return == nvml::kNotSupported) continue;  // never asked again
    keep.push_back(f);
    keep_slots.push_back(d.field_slots[i]);
    if (f.nvml_return != nvml::kSuccess) continue;
    NvmlCounter c;
    if (auto v = Unsigned(f, &c.bits)) {
      c.value = *v;
      c.time_us = f.timestamp;
      r.*(d.field_slots[i]->target) = c;
    }
  }
  d.fields = std::move(keep);
  d.field_slots = std::move(keep_slots);
}

void ReadProcesses(const Shared& sh, Dev& d, NvmlReading& r) {
  if (!sh.api.processes) return;
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Room for `capacity` entries of the largest stride any driver wrote, zeroed (sys/nvml_processes.h).
    d.process_buffer.assign(static_cast<size_t>(d.process_capacity) * nvml::kLargestProcessStride, 0);
    unsigned count = d.process_capacity;
    int s = sh.api.processes(d.handle, &count, d.process_buffer.data());
    if (Lost(d, s)) return;
    if (s == nvml::kInsufficientSize) {  // the list grew: it is dynamic (nvml.h); ask again with room
      d.process_capacity = std::min(std::max(count, d.process_capacity) + 16, 4096u);
      continue;
    }
    if (s != nvml::kSuccess) return;
    count = std::min(count, d.process_capacity);
    DecodedProcesses p = DecodeProcesses(d.process_buffer, count, d.memory_total, sh.options.pid_visible);
    r.processes = std::move(p.processes);
    r.process_stride = p.stride;
    return;
  }
}

void ReadGpm(const Api& api, Dev& d, NvmlReading& r) {
  static constexpr unsigned kIds[] = {nvml::kGpmSmUtil,
                                      nvml::kGpmSmOccupancy,
                                      nvml::kGpmAnyTensorUtil,
                                      nvml::kGpmDramBwUtil,
                                      nvml::kGpmPcieTxPerSec,
                                      nvml::kGpmPcieRxPerSec,
                                      nvml::kGpmNvlinkTotalTxPerSec,
                                      nvml::kGpmNvlinkTotalRxPerSec};
  static_assert(sizeof kIds / sizeof *kIds <= nvml::kGpmOldestMax, "at most 98 metrics per call");
  const bool mig = d.info.mig_enabled.value_or(false);
  for (GpmPair& p : d.gpm) {
    auto now = std::chrono::steady_clock::now();
    if (p.have_previous && now - p.previous_at < kGpmMinSpan) {
      // A tick a few ms early (scheduling jitter at a 100 ms interval) waits for the span; one far too
      // soon keeps its baseline and gives no metrics.
      if (now - p.previous_at < kGpmMinSpan - kGpmMaxWait) continue;
      std::this_thread::sleep_until(p.previous_at + kGpmMinSpan);
      now = std::chrono::steady_clock::now();
    }
    int s = mig ? api.gpm_mig_get(d.handle, p.gpu_instance_id, p.current) : api.gpm_get(d.handle, p.current);
    if (Lost(d, s)) return;
    if (s != nvml::kSuccess) {
      p.have_previous = false;
      continue;
    }
    if (p.have_previous) {
      auto get = std::make_unique<nvml::GpmMetricsGet>();  // value-initialised: zeroed
      get->version = nvml::kGpmMetricsGetVersion;
      get->num_metrics = sizeof kIds / sizeof *kIds;
      get->sample1 = p.previous;
      get->sample2 = p.current;
      for (unsigned i = 0; i < get->num_metrics; ++i) get->metrics[i].metric_id = kIds[i];
      if (int m = api.gpm_metrics(get.get()); m == nvml::kSuccess) {
        NvmlGpm g;
        std::optional<double>* out[] = {&g.sm_util_pct,      &g.sm_occupancy_pct, &g.tensor_util_pct,
                                        &g.dram_bw_util_pct, &g.pcie_tx_mib_s,    &g.pcie_rx_mib_s,
                                        &g.nvlink_tx_mib_s,  &g.nvlink_rx_mib_s};
        for (unsigned i = 0; i < get->num_metrics; ++i) {
          const nvml::GpmMetric& x = get->metrics[i];
          if (x.nvml_return == nvml::kSuccess && std::isfinite(x.value) && x.value >= 0) *out[i] = x.value;
        }
        if (mig)
          r.mig_gpm.emplace_back(p.gpu_instance_id, g);
        else
          r.gpm = g;
      } else if (Lost(d, m)) {
        return;
      }
    }
    std::swap(p.previous, p.current);  // this sample is the next span's baseline
    p.have_previous = true;
    p.previous_at = now;
  }
}

// Memory used and total: the v2 call while it answers, else the v1 call. False once the GPU is lost.
bool ReadMemoryUse(const Api& api, Dev& d, NvmlReading& r) {
  if (d.memory_v2_ok && api.memory_v2) {
    nvml::MemoryV2 m{};
    m.version = nvml::kMemoryV2Version;
    int s = api.memory_v2(d.handle, &m);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) {
      r.memory_used_bytes = m.used;
      r.memory_total_bytes = m.total;
    } else if (s == nvml::kNotSupported || s == nvml::kArgumentVersionMismatch ||
               s == nvml::kFunctionNotFound) {
      d.memory_v2_ok = false;
    }
  }
  if (!r.memory_used_bytes && api.memory) {
    nvml::Memory m{};
    int s = api.memory(d.handle, &m);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) {
      r.memory_used_bytes = m.used;
      r.memory_total_bytes = m.total;
    }
  }
  return true;
}

// Power draw and the enforced power limit. False once the GPU is lost.
bool ReadPowerUse(const Api& api, Dev& d, NvmlReading& r) {
  auto u32 = [&](int (*fn)(Device, unsigned*), std::optional<unsigned>& out) {
    unsigned v = 0;
    if (!fn) return;
    int s = fn(d.handle, &v);
    if (!Lost(d, s) && s == nvml::kSuccess) out = v;
  };
  u32(api.power, r.power_mw);
  u32(api.enforced_limit, r.power_limit_enforced_mw);
  return !d.lost;
}

// Energy, SM clock, temperature and the clock-event reasons. False once the GPU is lost.
bool ReadClocksAndHeat(const Api& api, Dev& d, NvmlReading& r) {
  if (unsigned long long e = 0; api.energy) {
    int s = api.energy(d.handle, &e);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) r.energy_mj = e;
  }
  if (unsigned mhz = 0; api.clock) {
    int s = api.clock(d.handle, nvml::kClockSm, &mhz);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) r.sm_clock_mhz = mhz;
  }
  if (unsigned c = 0; api.temperature) {
    int s = api.temperature(d.handle, nvml::kTemperatureGpu, &c);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) r.temperature_c = c;
  }
  for (auto fn :
       {api.event_reasons, api.throttle_reasons}) {  // the R535+ call, the deprecated one as fallback
    if (!fn) continue;
    unsigned long long bits = 0;
    int s = fn(d.handle, &bits);
    if (Lost(d, s)) return false;
    if (s == nvml::kSuccess) {
      r.clock_event_reasons = bits;
      break;
    }
  }
  return true;
}

void ReadOne(const Shared& sh, Dev& d, NvmlReading& r) {
  const Api& api = sh.api;
  r.time_us = WallMicros();
  ReadDuty(api, d, r);
  if (d.lost) return;
  if (!ReadMemoryUse(api, d, r)) return;
  if (!ReadPowerUse(api, d, r)) return;
  if (!ReadClocksAndHeat(api, d, r)) return;
  ReadFields(api, d, r);
  if (d.lost) return;
  ReadProcesses(sh, d, r);
  if (d.lost) return;
  ReadGpm(api, d, r);
}

std::vector<NvmlReading> Session::Read(const std::vector<size_t>& positions,
                                       std::chrono::steady_clock::time_point deadline) {
  struct Pending {
    std::shared_ptr<NvmlReading> reading;
    bool started = false;
  };
  std::vector<NvmlReading> out(positions.size());
  std::vector<Pending> pending(positions.size());
  for (size_t k = 0; k < positions.size(); ++k) {
    if (positions[k] >= devs_.size() || !devs_[positions[k]]->handle) {
      out[k].state = NvmlReadState::kLost;
      continue;
    }
    std::shared_ptr<Dev> d = devs_[positions[k]];
    if (d->lost) {
      out[k].state = NvmlReadState::kLost;
      continue;
    }
    auto reading = std::make_shared<NvmlReading>();
    pending[k].reading = reading;
    pending[k].started = d->worker.Start([sh = sh_, d, reading] { ReadOne(*sh, *d, *reading); });
    if (!pending[k].started) out[k].state = NvmlReadState::kStuck;
  }
  for (size_t k = 0; k < positions.size(); ++k) {
    if (!pending[k].started) continue;
    Dev& d = *devs_[positions[k]];
    if (!d.worker.WaitUntil(deadline)) {
      out[k].state = NvmlReadState::kLate;
      out[k].time_us = WallMicros();
      continue;
    }
    out[k] = std::move(*pending[k].reading);
    if (d.lost) out[k] = NvmlReading{NvmlReadState::kLost, out[k].time_us};
  }
  return out;
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  bool stuck = false;
  for (const auto& d : devs_) stuck = stuck || d->worker.Busy();
  if (stuck) {
    // A call that never returned: leave every worker and the library as they are; nvmlShutdown under a
    // call still in progress is not safe, and joining would wait forever.
    // The stuck task holds its GPU's state and the shared API table itself. The other GPUs' state (their GPM
    // samples belong to the library, which is never shut down) stays reachable for the rest of the process,
    // on purpose: nothing of a library still inside a call is freed.
    static auto* const abandoned = new std::vector<std::shared_ptr<Dev>>();
    for (const auto& d : devs_) d->worker.Abandon();
    abandoned->insert(abandoned->end(), devs_.begin(), devs_.end());
    devs_.clear();
    return;
  }
  for (const auto& d : devs_) {
    for (GpmPair& p : d->gpm) {
      api_.gpm_free(p.previous);
      api_.gpm_free(p.current);
    }
    d->gpm.clear();
  }
  devs_.clear();
  if (initialised_ && api_.shutdown) api_.shutdown();
  initialised_ = false;
}

}  // namespace

NvmlOpenResult OpenNvmlSession(const NvmlSessionOptions& options) {
  NvmlOpenResult out;
  DlHandle lib = DlOpen(kNvidiaMlSoname);
  if (!lib.handle) {
    out.error = lib.error;
    return out;
  }
  Api api;
  Bind(lib.handle, api);
  // The open runs on a worker too; the task holds the session, so a stuck nvmlInit keeps what it uses.
  auto session = std::make_shared<std::unique_ptr<Session>>(std::make_unique<Session>(api, options));
  auto error = std::make_shared<std::string>();
  DeadlineWorker worker;
  const auto deadline = std::chrono::steady_clock::now() + options.open_deadline;
  if (worker.Run([session, error] { *error = (*session)->OpenDevices(); }, deadline) !=
      DeadlineWorker::Outcome::kDone) {
    worker.Abandon();
    out.error = "NVML did not answer within " + std::to_string(options.open_deadline.count() / 1000) +
                " s (nvmlInit_v2 or a device query is stuck)";
    return out;
  }
  if (!error->empty()) {
    out.error = *error;
    (*session)->Close();
    return out;
  }
  out.session = std::move(*session);
  return out;
}

}  // namespace gp::sys
