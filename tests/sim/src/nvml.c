/* Stand-in libnvidia-ml.so.<driver version> for the simulated GPU server (tests/sim): the NVML entry
 * points gpuprep and nvidia-smi use, with NVML's return codes and error strings, answering from the fake
 * sysfs. Compiled once; its driver version is the one in the name it is installed under
 * (libnvidia-ml.so.580.95.05), so every packaged release reports its own version. */
#include "simgpu.h"

static const char* driver_version(void) {
  static char v[64];
  if (!v[0]) sim_own_version((const void*)driver_version, "libnvidia-ml.so.", v, sizeof v);
  return v;
}

typedef int nvmlReturn_t;
typedef struct sim_gpu* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

static int g_init = 0;
static struct sim_gpu g_gpus[SIM_MAX_GPUS];
static int g_count = 0;

static nvmlReturn_t copy_str(char* out, unsigned len, const char* s) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(out, s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
  char loaded[64];
  sim_loaded_version(loaded, sizeof loaded);
  if (!loaded[0]) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (strcmp(loaded, driver_version()) != 0) return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
  g_count = sim_gpus(g_gpus, SIM_MAX_GPUS);
  ++g_init;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

nvmlReturn_t nvmlShutdown(void) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  --g_init;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  return copy_str(version, length, driver_version());
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  char buf[80];
  snprintf(buf, sizeof buf, "%d.%s", sim_cuda_api_for_driver(driver_version()) / 1000, driver_version());
  return copy_str(version, length, buf);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  *v = sim_cuda_api_for_driver(driver_version());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = (unsigned)g_count;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!device || index >= (unsigned)g_count) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_gpus[index];
  return NVML_SUCCESS;
}

/* NVML takes "domain:bus:device.function" in hex, with a 4- or 8-digit domain and either case. */
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  unsigned dom, bus, dev, fn;
  if (!bus_id || !device || sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
    return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < g_count; ++i) {
    unsigned d2, b2, v2, f2;
    if (sscanf(g_gpus[i].bdf, "%x:%x:%x.%x", &d2, &b2, &v2, &f2) == 4 && d2 == dom && b2 == bus &&
        v2 == dev && f2 == fn) {
      *device = &g_gpus[i];
      return NVML_SUCCESS;
    }
  }
  return 6; /* NVML_ERROR_NOT_FOUND */
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  return copy_str(name, length, sim_model(d->device)->name);
}

/* A stable fake UUID derived from the PCI address. */
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned h = 2166136261u;
  for (const char* p = d->bdf; *p; ++p) h = (h ^ (unsigned char)*p) * 16777619u;
  char buf[96];
  snprintf(buf, sizeof buf, "GPU-%08x-5151-4d0c-8e2a-%012x", h, d->device);
  return copy_str(uuid, length, buf);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d || !m) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = (unsigned long long)sim_model(d->device)->memory_mib << 20;
  m->used = 0;
  m->free = m->total;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d || !major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = sim_model(d->device)->cc_major;
  *minor = sim_model(d->device)->cc_minor;
  return NVML_SUCCESS;
}

/* nvmlPciInfo_t as nvml.h declares it for nvmlDeviceGetPciInfo_v3. */
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d || !pci) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  if (sscanf(d->bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return NVML_ERROR_INVALID_ARGUMENT;
  memset(pci, 0, sizeof *pci);
  pci->domain = dom;
  pci->bus = bus;
  pci->device = dev;
  pci->pciDeviceId = ((unsigned)d->device << 16) | 0x10deu;
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  snprintf(pci->busId, sizeof pci->busId, "%08x:%02x:%02x.%x", dom, bus, dev, fn);
  return NVML_SUCCESS;
}

/* A stable fake board serial (13 digits, as data-center boards report) derived from the PCI address. */
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* serial, unsigned int length) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned h = 2166136261u;
  for (const char* p = d->bdf; *p; ++p) h = (h ^ (unsigned char)*p) * 16777619u;
  char buf[32];
  snprintf(buf, sizeof buf, "165%010u", h);
  return copy_str(serial, length, buf);
}

/* Not an NVML function: the PCI address of a handle, for the stand-in nvidia-smi. */
const char* simNvmlDeviceBusId(nvmlDevice_t d) { return d ? d->bdf : ""; }

/* The GPU fabric state (NVLink fabric registration), as nvml.h declares it: nvmlGpuFabricInfo_t for the
 * first call, nvmlGpuFabricInfo_v2_t and _v3_t (= nvmlGpuFabricInfoV_t) for nvmlDeviceGetGpuFabricInfoV,
 * whose version word is NVML_STRUCT_VERSION(GpuFabricInfo, N) = sizeof | N << 24. */
enum {
  NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_STATE_NOT_STARTED = 1,
  NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2,
  NVML_GPU_FABRIC_STATE_COMPLETED = 3,
};
#define NVML_GPU_FABRIC_UUID_LEN 16
typedef struct {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
} nvmlGpuFabricInfo_t;
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
} nvmlGpuFabricInfo_v2_t;
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfo_v3_t;
#define SIM_FABRIC_VERSION(type, n) ((unsigned)sizeof(type) | ((unsigned)(n) << 24))
_Static_assert(SIM_FABRIC_VERSION(nvmlGpuFabricInfo_v2_t, 2) == 0x02000024u, "nvmlGpuFabricInfo_v2");
_Static_assert(SIM_FABRIC_VERSION(nvmlGpuFabricInfo_v3_t, 3) == 0x03000028u, "nvmlGpuFabricInfo_v3");

/* An HGX B200-style board: a ConnectX-7 function of the fake sysfs whose VPD names it an NVLink switch
 * bridge (SMDL=SW_MNG). Elsewhere the state is NOT_SUPPORTED (the simulated NVSwitch hosts included). */
static int hgx_board(void) {
  char dir[PATH_MAX];
  sim_path(dir, sizeof dir, "/sys/bus/pci/devices");
  DIR* d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  struct dirent* e;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char rel[PATH_MAX], buf[1024];
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/vendor", e->d_name);
    if (sim_read_file(rel, buf, sizeof buf) <= 0 || strtoul(buf, NULL, 16) != 0x15b3) continue;
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/vpd", e->d_name);
    int n = sim_read_file(rel, buf, sizeof buf);
    if (n > 0 && memmem(buf, (size_t)n, "SMDL=SW_MNG", 11)) found = 1;
  }
  closedir(d);
  return found;
}

/* The state Fabric Manager left: the simulated fabric manager writes "completed" to this file once it runs
 * with NVLSM and ib_umad (under /run, so a reboot clears it); until then registration is in progress. */
static unsigned char fabric_state(nvmlReturn_t* status) {
  char buf[64];
  *status = NVML_SUCCESS;
  if (!hgx_board()) return NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
  if (sim_read_file("/run/gpuprep-sim/fabric-state", buf, sizeof buf) > 0 &&
      strncmp(buf, "completed", 9) == 0)
    return NVML_GPU_FABRIC_STATE_COMPLETED;
  return NVML_GPU_FABRIC_STATE_IN_PROGRESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, void* info) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d || !info) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned version;
  memcpy(&version, info, sizeof version);
  nvmlReturn_t status;
  unsigned char state = fabric_state(&status);
  if (state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) return NVML_ERROR_NOT_SUPPORTED;
  if (version == SIM_FABRIC_VERSION(nvmlGpuFabricInfo_v3_t, 3)) {
    nvmlGpuFabricInfo_v3_t* v = info;
    memset(v, 0, sizeof *v);
    v->version = version;
    v->status = status;
    v->state = state;
    return NVML_SUCCESS;
  }
  if (version == SIM_FABRIC_VERSION(nvmlGpuFabricInfo_v2_t, 2)) {
    nvmlGpuFabricInfo_v2_t* v = info;
    memset(v, 0, sizeof *v);
    v->version = version;
    v->status = status;
    v->state = state;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* info) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  if (!d || !info) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t status;
  unsigned char state = fabric_state(&status);
  if (state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED) return NVML_ERROR_NOT_SUPPORTED;
  memset(info, 0, sizeof *info);
  info->status = status;
  info->state = state;
  return NVML_SUCCESS;
}
