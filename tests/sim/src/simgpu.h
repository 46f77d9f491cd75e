/* Shared by the stand-in NVIDIA libraries of the simulated GPU server (tests/sim). Not NVIDIA code: small
 * fakes that answer from the simulated host's fake sysfs (/sys/bus/pci/devices) and fake
 * /proc/driver/nvidia/version, so gpuprep's dlopen probes see a GPU server. GPUPREP_SIM_ROOT (optional)
 * prefixes every path, for testing the stand-ins outside the simulation; in a container the hook's view does.
 */
#ifndef GPUPREP_SIM_SIMGPU_H
#define GPUPREP_SIM_SIMGPU_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIM_MAX_GPUS 64

struct sim_gpu {
  char bdf[32];    /* 0000:18:00.0 */
  unsigned device; /* 0x2330 */
};

/* Inside a container, the GPU view the toolkit's stand-in hook gave it (the GPUs the container was handed,
 * the driver's version files), where the real toolkit would have mounted device nodes. */
#define SIM_CONTAINER_VIEW "/run/nvidia-container-sim"

static inline void sim_path(char* out, size_t n, const char* rel) {
  const char* root = getenv("GPUPREP_SIM_ROOT");
  if (!root && access(SIM_CONTAINER_VIEW "/proc/driver/nvidia/version", F_OK) == 0) root = SIM_CONTAINER_VIEW;
  int w = snprintf(out, n, "%s%s", root ? root : "", rel);
  if (w < 0 || (size_t)w >= n) out[0] = 0; /* too long: no such file */
}

/* The version a stand-in library was packaged as, read from its own file name: each is compiled once and
 * installed under the versioned name of every package release (libnvidia-ml.so.580.95.05,
 * libcudnn.so.9.12.0...), so the code at ADDR finds "580.95.05" after STEM ("libnvidia-ml.so.") in the
 * real path of the file it was loaded from. "" when the name does not have that form. */
static inline void sim_own_version(const void* addr, const char* stem, char* out, size_t n) {
  Dl_info info;
  char real[PATH_MAX];
  out[0] = 0;
  if (!dladdr(addr, &info) || !info.dli_fname || !realpath(info.dli_fname, real)) return;
  const char* base = strrchr(real, '/');
  base = base ? base + 1 : real;
  size_t len = strlen(stem);
  if (strncmp(base, stem, len) != 0 || strlen(base + len) >= n) return;
  strcpy(out, base + len);
}

/* "12.9.79" -> {12, 9, 79}; missing parts are 0. */
static inline void sim_split3(const char* v, int out[3]) {
  out[0] = out[1] = out[2] = 0;
  sscanf(v, "%d.%d.%d", &out[0], &out[1], &out[2]);
}

/* The CUDA driver API version (cuDriverGetVersion) a driver branch reports: the CUDA release each branch
 * shipped with (R535 12.2, R550 12.4, R570 12.8, R575 12.9, R580 13.0, R590 13.1, R595 13.2). */
static inline int sim_cuda_api_for_driver(const char* driver) {
  static const int table[][2] = {{525, 12000}, {530, 12010}, {535, 12020}, {545, 12030}, {550, 12040},
                                 {555, 12050}, {560, 12060}, {565, 12070}, {570, 12080}, {575, 12090},
                                 {580, 13000}, {590, 13010}, {595, 13020}};
  int branch = atoi(driver), api = 11080;
  for (size_t i = 0; i < sizeof table / sizeof *table; ++i)
    if (branch >= table[i][0]) api = table[i][1];
  return api;
}

static inline int sim_read_file(const char* rel, char* buf, size_t n) {
  char p[PATH_MAX];
  sim_path(p, sizeof p, rel);
  FILE* f = fopen(p, "r");
  if (!f) return -1;
  size_t got = fread(buf, 1, n - 1, f);
  fclose(f);
  buf[got] = 0;
  return (int)got;
}

/* The version of the "loaded" kernel module, "" when none is loaded. Parses the NVRM line in both the
 * proprietary ("Kernel Module  535.129.03  Thu ...") and open ("for x86_64  565.57.01  Release Build")
 * formats, else /sys/module/nvidia/version. */
static inline void sim_loaded_version(char* out, size_t n) {
  char buf[1024];
  out[0] = 0;
  if (sim_read_file("/proc/driver/nvidia/version", buf, sizeof buf) > 0) {
    const char* markers[] = {"Kernel Module  ", "x86_64  ", "aarch64  "};
    for (size_t i = 0; i < sizeof markers / sizeof *markers; ++i) {
      char* p = strstr(buf, markers[i]);
      if (!p) continue;
      p += strlen(markers[i]);
      size_t len = strspn(p, "0123456789.");
      if (len == 0 || len >= n) continue;
      memcpy(out, p, len);
      out[len] = 0;
      return;
    }
  }
  if (sim_read_file("/sys/module/nvidia/version", buf, sizeof buf) > 0) {
    size_t len = strspn(buf, "0123456789.");
    if (len > 0 && len < n) {
      memcpy(out, buf, len);
      out[len] = 0;
    }
  }
}

static inline int sim_cmp_gpu(const void* a, const void* b) {
  return strcmp(((const struct sim_gpu*)a)->bdf, ((const struct sim_gpu*)b)->bdf);
}

/* NVIDIA display/3D controllers (class 0x03xxxx) bound to the nvidia driver, sorted by PCI address. */
static inline int sim_gpus(struct sim_gpu* gpus, int max) {
  char dir[PATH_MAX];
  sim_path(dir, sizeof dir, "/sys/bus/pci/devices");
  DIR* d = opendir(dir);
  if (!d) return 0;
  int count = 0;
  struct dirent* e;
  while ((e = readdir(d)) && count < max) {
    if (e->d_name[0] == '.') continue;
    char rel[PATH_MAX], buf[256], link[PATH_MAX], target[PATH_MAX];
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/vendor", e->d_name);
    if (sim_read_file(rel, buf, sizeof buf) <= 0 || strtoul(buf, NULL, 16) != 0x10de) continue;
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/class", e->d_name);
    if (sim_read_file(rel, buf, sizeof buf) <= 0 || (strtoul(buf, NULL, 16) >> 16) != 0x03) continue;
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/driver", e->d_name);
    sim_path(link, sizeof link, rel);
    ssize_t len = readlink(link, target, sizeof target - 1);
    if (len <= 0) continue;
    target[len] = 0;
    const char* base = strrchr(target, '/');
    if (strcmp(base ? base + 1 : target, "nvidia") != 0) continue;
    snprintf(rel, sizeof rel, "/sys/bus/pci/devices/%s/device", e->d_name);
    if (sim_read_file(rel, buf, sizeof buf) <= 0) continue;
    if (strlen(e->d_name) >= sizeof gpus[count].bdf) continue;
    memcpy(gpus[count].bdf, e->d_name, strlen(e->d_name) + 1);
    gpus[count].device = (unsigned)strtoul(buf, NULL, 16);
    ++count;
  }
  closedir(d);
  qsort(gpus, (size_t)count, sizeof *gpus, sim_cmp_gpu);
  return count;
}

/* Name, memory (MiB) and compute capability as nvidia-smi shows them, for the fixture's GPUs (memory
 * figures are test values of the right size). */
struct sim_model {
  unsigned device;
  const char* name;
  unsigned memory_mib;
  int cc_major, cc_minor;
};
static const struct sim_model sim_models[] = {
    {0x2330, "NVIDIA H100 80GB HBM3", 81559, 9, 0},
    {0x20b0, "NVIDIA A100-SXM4-40GB", 40960, 8, 0},
    {0x1db1, "Tesla V100-SXM2-16GB", 16384, 7, 0},
    {0x2901, "NVIDIA B200", 183359, 10, 0},
};
static inline const struct sim_model* sim_model(unsigned device) {
  static const struct sim_model unknown = {0, "NVIDIA Graphics Device", 0, 0, 0};
  for (size_t i = 0; i < sizeof sim_models / sizeof *sim_models; ++i)
    if (sim_models[i].device == device) return &sim_models[i];
  return &unknown;
}

#endif
