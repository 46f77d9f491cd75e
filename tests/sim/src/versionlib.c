/* Stand-in for a versioned NVIDIA library of the simulated GPU server (tests/sim): exports one
 * "get version" entry point, e.g. -DSIM_FUNC=cudnnGetVersion -DSIM_VALUE=8907 for libcudnn.so.8,
 * -DSIM_FUNC=ncclGetVersion -DSIM_VALUE=21805 -DSIM_OUT_PARAM for libnccl.so.2,
 * -DSIM_FUNC=cudaRuntimeGetVersion -DSIM_VALUE=12020 -DSIM_OUT_PARAM for libcudart.so.12. */
#ifdef SIM_OUT_PARAM
int SIM_FUNC(int* version) {  /* ncclResult_t / cudaError_t: 0 = success */
  if (!version) return 1;
  *version = SIM_VALUE;
  return 0;
}
#else
unsigned long SIM_FUNC(void) { return SIM_VALUE; }  /* size_t cudnnGetVersion(void) */
#endif
