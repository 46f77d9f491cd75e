// DlopenNativeLibs: version and health calls into NVIDIA's libraries through dlopen, no CUDA headers.
// Libraries are opened RTLD_LAZY|RTLD_LOCAL and never closed: NCCL and NVML may start threads, and
// unloading code a thread still runs crashes the process at exit.
#include "sys/native.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sys/dl.h"
#include "sys/nvml_fabric.h"
#include "sys/nvml_health.h"

namespace gp::sys {
namespace {

// The C ABI of the few functions used (from NVIDIA's public headers; status codes: 0 = success).
using IntFn = int (*)(int*);  // cudaRuntimeGetVersion, ncclGetVersion, cuDriverGetVersion, cuDeviceGetCount
using SizeFn = size_t (*)();  // cudnnGetVersion
using InitFn = int (*)(unsigned);                      // cuInit
using NvmlVoidFn = int (*)();                          // nvmlInit_v2, nvmlShutdown
using NvmlStrFn = int (*)(char*, unsigned);            // nvmlSystemGetDriverVersion, nvmlSystemGetNVMLVersion
using NvmlCountFn = int (*)(unsigned*);                // nvmlDeviceGetCount_v2
using NvmlErrFn = const char* (*)(int);                // nvmlErrorString
using NvmlHandleFn = int (*)(unsigned, void**);        // nvmlDeviceGetHandleByIndex_v2
using NvmlDevStrFn = int (*)(void*, char*, unsigned);  // nvmlDeviceGetUUID, nvmlDeviceGetSerial
// nvmlPciInfo_t as nvml.h declares it for nvmlDeviceGetPciInfo_v3
// (https://docs.nvidia.com/deploy/nvml-api/structnvmlPciInfo__t.html).
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
using NvmlPciFn = int (*)(void*, NvmlPciInfo*);  // nvmlDeviceGetPciInfo_v3
// nvmlMemory_t for nvmlDeviceGetMemoryInfo
// (https://docs.nvidia.com/deploy/nvml-api/structnvmlMemory__t.html).
struct NvmlMemory {
  unsigned long long total, free, used;
};
using NvmlMemFn = int (*)(void*, NvmlMemory*);  // nvmlDeviceGetMemoryInfo
using CuErrFn = int (*)(int, const char**);     // cuGetErrorString
struct Opened {
  void* handle = nullptr;
  std::string path;
  std::string error;
};

std::string PathOf(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    return map->l_name;
  return fallback;
}

// Tries each soname in each extra dir first (a toolkit outside the loader path), then the default search.
Opened Open(const std::vector<std::string>& sonames, const std::vector<std::string>& extra_dirs) {
  Opened o;
  std::vector<std::string> tries;
  for (const auto& dir : extra_dirs) {
    for (const auto& so : sonames) tries.push_back(dir + "/" + so);
  }
  for (const auto& so : sonames) tries.push_back(so);
  for (const auto& t : tries) {
    DlHandle h = DlOpenFile(t, RTLD_LAZY | RTLD_LOCAL);
    if (h.handle) {
      o.handle = h.handle;
      o.path = PathOf(h.handle, t);
      return o;
    }
    if ((o.error.empty() || t.find('/') == std::string::npos) && !h.error.empty()) o.error = h.error;
  }
  return o;
}

LibCall CallInt(const std::vector<std::string>& sonames, const std::vector<std::string>& extra_dirs,
                const char* symbol) {
  LibCall r;
  Opened o = Open(sonames, extra_dirs);
  if (!o.handle) {
    r.error = o.error;
    return r;
  }
  r.loaded = true;
  r.path = o.path;
  auto fn = DlSym<IntFn>(o.handle, symbol);
  if (!fn) {
    r.error = std::string(symbol) + " not found in " + o.path;
    return r;
  }
  int v = 0;
  int status = fn(&v);
  if (status != 0) {
    r.error = std::string(symbol) + " returned " + std::to_string(status);
    return r;
  }
  r.value = v;
  return r;
}

// The GPUs NVML counted in `r` (at most 64): PCI address, UUID, serial, memory and fabric state of each
// that answers, through the library open at `lib` (initialised).
void ListNvmlDevices(void* lib, NvmlInfo& r) {
  char buf[96];
  auto handle = DlSym<NvmlHandleFn>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto pci = DlSym<NvmlPciFn>(lib, "nvmlDeviceGetPciInfo_v3");
  auto uuid = DlSym<NvmlDevStrFn>(lib, "nvmlDeviceGetUUID");
  auto serial = DlSym<NvmlDevStrFn>(lib, "nvmlDeviceGetSerial");
  auto memory = DlSym<NvmlMemFn>(lib, "nvmlDeviceGetMemoryInfo");
  nvml::FabricCalls fabric;
  fabric.v3 = DlSym<nvml::FabricV3Fn>(lib, "nvmlDeviceGetGpuFabricInfoV");
  fabric.v2 = DlSym<nvml::FabricV2Fn>(lib, "nvmlDeviceGetGpuFabricInfoV");
  fabric.v1 = DlSym<nvml::FabricV1Fn>(lib, "nvmlDeviceGetGpuFabricInfo");
  for (long i = 0; handle && pci && r.device_count && i < *r.device_count && i < 64; ++i) {
    void* dev = nullptr;
    NvmlPciInfo info{};
    if (handle(static_cast<unsigned>(i), &dev) != 0 || pci(dev, &info) != 0) continue;
    NvmlDevice d;
    char addr[32];
    std::snprintf(addr, sizeof addr, "%04x:%02x:%02x.0", info.domain & 0xffffu, info.bus & 0xffu,
                  info.device & 0x1fu);
    d.pci = addr;
    if (uuid && uuid(dev, buf, sizeof buf) == 0) d.uuid = std::string(buf, strnlen(buf, sizeof buf));
    if (serial && serial(dev, buf, sizeof buf) == 0) d.serial = std::string(buf, strnlen(buf, sizeof buf));
    if (NvmlMemory m{}; memory && memory(dev, &m) == 0 && m.total > 0) d.memory_total = m.total;
    nvml::ReadFabric(fabric, dev, d);
    r.devices.push_back(std::move(d));
  }
}

}  // namespace

LibCall DlopenNativeLibs::CudaRuntimeVersion(const std::vector<std::string>& extra_dirs) {
  return CallInt({"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}, extra_dirs,
                 "cudaRuntimeGetVersion");
}

LibCall DlopenNativeLibs::CudnnVersion(const std::vector<std::string>& extra_dirs) {
  LibCall r;
  Opened o = Open({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.7", "libcudnn.so"}, extra_dirs);
  if (!o.handle) {
    r.error = o.error;
    return r;
  }
  r.loaded = true;
  r.path = o.path;
  if (auto fn = DlSym<SizeFn>(o.handle, "cudnnGetVersion"))
    r.value = static_cast<long>(fn());
  else
    r.error = "cudnnGetVersion not found in " + o.path;
  return r;
}

LibCall DlopenNativeLibs::NcclVersion(const std::vector<std::string>& extra_dirs) {
  return CallInt({"libnccl.so.2", "libnccl.so"}, extra_dirs, "ncclGetVersion");
}

NvmlInfo DlopenNativeLibs::Nvml(const std::vector<std::string>& bus_ids) {
  NvmlInfo r;
  Opened o = Open({"libnvidia-ml.so.1", "libnvidia-ml.so"},
                  nvml_dir_.empty() ? std::vector<std::string>{} : std::vector<std::string>{nvml_dir_});
  if (!o.handle) {
    r.error = o.error;
    return r;
  }
  r.loaded = true;
  r.path = o.path;
  auto init = DlSym<NvmlVoidFn>(o.handle, "nvmlInit_v2");
  auto err = DlSym<NvmlErrFn>(o.handle, "nvmlErrorString");
  auto text = [&](int status) {
    const char* s = err ? err(status) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(status);
  };
  if (!init) {
    r.error = "nvmlInit_v2 not found in " + o.path;
    return r;
  }
  if (int s = init(); s != 0) {
    r.error = text(s);  // e.g. "Driver/library version mismatch", "Driver Not Loaded"
    return r;
  }
  char buf[96];
  if (auto fn = DlSym<NvmlStrFn>(o.handle, "nvmlSystemGetDriverVersion"); fn && fn(buf, sizeof buf) == 0) {
    r.driver_version = std::string(buf);
  }
  if (auto fn = DlSym<NvmlStrFn>(o.handle, "nvmlSystemGetNVMLVersion"); fn && fn(buf, sizeof buf) == 0) {
    r.nvml_version = std::string(buf);
  }
  if (auto fn = DlSym<NvmlCountFn>(o.handle, "nvmlDeviceGetCount_v2")) {
    unsigned n = 0;
    if (int s = fn(&n); s == 0)
      r.device_count = static_cast<long>(n);
    else
      r.error = text(s);
  }
  ListNvmlDevices(o.handle, r);
  nvml::HealthCalls health;
  nvml::BindHealth(o.handle, health);
  for (const auto& bus : bus_ids) r.buses.push_back(nvml::AskBus(health, bus));
  if (auto fn = DlSym<NvmlVoidFn>(o.handle, "nvmlShutdown")) fn();
  return r;
}

CudaDriverInfo DlopenNativeLibs::CudaDriver() {
  CudaDriverInfo r;
  Opened o = Open({"libcuda.so.1", "libcuda.so"}, {});
  if (!o.handle) {
    r.error = o.error;
    return r;
  }
  r.loaded = true;
  r.path = o.path;
  auto errstr = DlSym<CuErrFn>(o.handle, "cuGetErrorString");
  auto text = [&](const char* call, int status) {
    const char* s = nullptr;
    if (errstr) errstr(status, &s);
    return std::string(call) + ": " + (s ? s : "CUDA error " + std::to_string(status));
  };
  if (auto fn = DlSym<IntFn>(o.handle, "cuDriverGetVersion")) {
    int v = 0;
    if (int s = fn(&v); s == 0)
      r.driver_api_version = v;
    else
      r.error = text("cuDriverGetVersion", s);
  }
  auto init = DlSym<InitFn>(o.handle, "cuInit");
  if (!init) {
    r.error = "cuInit not found in " + o.path;
    return r;
  }
  if (int s = init(0); s != 0) {
    r.error = text("cuInit", s);  // e.g. "cuInit: no CUDA-capable device is detected"
    return r;
  }
  if (auto fn = DlSym<IntFn>(o.handle, "cuDeviceGetCount")) {
    int n = 0;
    if (int s = fn(&n); s == 0)
      r.device_count = n;
    else
      r.error = text("cuDeviceGetCount", s);
  }
  return r;
}

}  // namespace gp::sys
