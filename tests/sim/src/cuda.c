/* Stand-in libcuda.so.<driver version> for the simulated GPU server (tests/sim): cuInit, cuDriverGetVersion,
 * cuDeviceGetCount, cuGetErrorString/Name with the driver API's codes, answering from the fake sysfs.
 * Compiled once; the driver version is the one in the name it is installed under (libcuda.so.580.95.05). */
#include "simgpu.h"

static const char* driver_version(void) {
  static char v[64];
  if (!v[0]) sim_own_version((const void*)driver_version, "libcuda.so.", v, sizeof v);
  return v;
}

typedef int CUresult;
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
};

static int g_init = 0;
static CUresult g_init_result = CUDA_ERROR_NOT_INITIALIZED;

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  char loaded[64];
  sim_loaded_version(loaded, sizeof loaded);
  struct sim_gpu gpus[SIM_MAX_GPUS];
  if (!loaded[0])
    g_init_result = CUDA_ERROR_NO_DEVICE;
  else if (strcmp(loaded, driver_version()) != 0)
    g_init_result = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
  else if (sim_gpus(gpus, SIM_MAX_GPUS) == 0)
    g_init_result = CUDA_ERROR_NO_DEVICE;
  else
    g_init_result = CUDA_SUCCESS;
  g_init = g_init_result == CUDA_SUCCESS;
  return g_init_result;
}

CUresult cuDriverGetVersion(int* version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = sim_cuda_api_for_driver(driver_version());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  if (!g_init) return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_gpu gpus[SIM_MAX_GPUS];
  *count = sim_gpus(gpus, SIM_MAX_GPUS);
  return CUDA_SUCCESS;
}

static const char* describe(CUresult r, int name) {
  switch (r) {
    case CUDA_SUCCESS:
      return name ? "CUDA_SUCCESS" : "no error";
    case CUDA_ERROR_INVALID_VALUE:
      return name ? "CUDA_ERROR_INVALID_VALUE" : "invalid argument";
    case CUDA_ERROR_NOT_INITIALIZED:
      return name ? "CUDA_ERROR_NOT_INITIALIZED" : "initialization error";
    case CUDA_ERROR_NO_DEVICE:
      return name ? "CUDA_ERROR_NO_DEVICE" : "no CUDA-capable device is detected";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return name ? "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
                  : "system has unsupported display driver / cuda driver combination";
    default:
      return NULL;
  }
}

CUresult cuGetErrorString(CUresult r, const char** s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  *s = describe(r, 0);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult r, const char** s) {
  if (!s) return CUDA_ERROR_INVALID_VALUE;
  *s = describe(r, 1);
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
