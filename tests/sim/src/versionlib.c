/* Stand-in for a versioned NVIDIA library of the simulated GPU server (tests/sim): exports its one "get
 * version" entry point and answers with the version in the file name it is installed under, so one build
 * serves every packaged release. One build per kind:
 *   -DSIM_KIND_CUDNN   libcudnn.so.9.12.0   size_t cudnnGetVersion(void): 91200 (cuDNN 9: M*10000+m*100+p;
 *                      cuDNN 8: M*1000+m*100+p, 8.9.7 -> 8907)
 *   -DSIM_KIND_NCCL    libnccl.so.2.27.7    ncclResult_t ncclGetVersion(int*): 22707 (X*10000+Y*100+Z)
 *   -DSIM_KIND_CUDART  libcudart.so.13.0.48 cudaError_t cudaRuntimeGetVersion(int*): 13000 (M*1000+m*10)
 *   -DSIM_KIND_NVC     libnvidia-container.so.1.17.8  int nvc_version_sim(int*): 1178 (M*1000+m*10+p) */
#include "simgpu.h"

#if defined(SIM_KIND_CUDNN)
#define SIM_STEM "libcudnn.so."
#elif defined(SIM_KIND_NCCL)
#define SIM_STEM "libnccl.so."
#elif defined(SIM_KIND_CUDART)
#define SIM_STEM "libcudart.so."
#elif defined(SIM_KIND_NVC)
#define SIM_STEM "libnvidia-container.so."
#else
#error "one of SIM_KIND_CUDNN, SIM_KIND_NCCL, SIM_KIND_CUDART, SIM_KIND_NVC"
#endif

static int own_version(void) {
  char v[64];
  int p[3];
  sim_own_version((const void*)own_version, SIM_STEM, v, sizeof v);
  sim_split3(v, p);
#if defined(SIM_KIND_CUDNN)
  return p[0] >= 9 ? p[0] * 10000 + p[1] * 100 + p[2] : p[0] * 1000 + p[1] * 100 + p[2];
#elif defined(SIM_KIND_NCCL)
  return p[0] * 10000 + p[1] * 100 + p[2];
#elif defined(SIM_KIND_CUDART)
  return p[0] * 1000 + p[1] * 10;
#else
  return p[0] * 1000 + p[1] * 10 + p[2];
#endif
}

#if defined(SIM_KIND_CUDNN)
unsigned long cudnnGetVersion(void) {
  return (unsigned long)own_version();
} /* size_t cudnnGetVersion(void) */
#else
#if defined(SIM_KIND_NCCL)
#define SIM_FUNC ncclGetVersion
#elif defined(SIM_KIND_CUDART)
#define SIM_FUNC cudaRuntimeGetVersion
#else
#define SIM_FUNC nvc_version_sim
#endif
int SIM_FUNC(int* version) { /* ncclResult_t / cudaError_t: 0 = success */
  if (!version) return 1;
  *version = own_version();
  return 0;
}
#endif
