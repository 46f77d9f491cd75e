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
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
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
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
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
