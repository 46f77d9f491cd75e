/* The floor for `gpuprep doctor --json` (bench/README.md): the least work any doctor must do on this
 * machine. It reads the files doctor reads (os-release, kernel, memory, CPUs, /dev/shm, the PCI devices in
 * sysfs, the NVIDIA driver's /proc and /sys files, modprobe.d, the dpkg database, the CUDA toolkit's
 * version files and cuDNN/NCCL headers, pip dist-info directories, Docker's daemon.json and socket, Secure
 * Boot, kernel headers) and dlopens cudart, cuDNN and NCCL for their versions. No parsing beyond what a
 * version needs, no JSON, no manifests. Prints one line. Build: cc -O2 doctor_floor.c -o doctor_floor -ldl */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

static size_t total; /* bytes read, printed so the reads cannot be optimised away */

static void slurp(const char* path) {
  char buf[65536];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) total += (size_t)n;
  close(fd);
}

static void slurp_dir(const char* dir) { /* every regular file directly in dir */
  DIR* d = opendir(dir);
  if (!d) return;
  struct dirent* e;
  char p[4096];
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    slurp(p);
  }
  closedir(d);
}

static void list_dir(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return;
  while (readdir(d)) total++;
  closedir(d);
}

static void exists(const char* path) {
  struct stat st;
  if (stat(path, &st) == 0) total++;
}

static void* open_lib(const char* const* names) {
  char p[512];
  for (const char* const* n = names; *n; ++n) {
    void* h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(p, sizeof p, "/usr/local/cuda/lib64/%s", *n);
    h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

static int call_version(const char* const* names, const char* symbol, int by_pointer) {
  void* h = open_lib(names);
  if (!h) return -1;
  int v = -1;
  if (by_pointer) { /* int f(int*) : cudaRuntimeGetVersion, ncclGetVersion */
    int (*f)(int*) = (int (*)(int*))dlsym(h, symbol);
    if (f && f(&v) != 0) v = -1;
  } else { /* size_t f(void) : cudnnGetVersion */
    size_t (*f)(void) = (size_t(*)(void))dlsym(h, symbol);
    if (f) v = (int)f();
  }
  return v;
}

int main(void) {
  struct utsname u;
  uname(&u);
  slurp("/etc/os-release");
  slurp("/proc/sys/kernel/osrelease");
  slurp("/proc/meminfo");
  slurp("/sys/devices/system/cpu/online");
  struct statfs sf;
  statfs("/dev/shm", &sf);
  statfs("/var", &sf);

  DIR* d = opendir("/sys/bus/pci/devices");
  if (d) {
    struct dirent* e;
    char p[512];
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      const char* files[] = {"vendor", "device", "class"};
      for (int i = 0; i < 3; ++i) {
        snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/%s", e->d_name, files[i]);
        slurp(p);
      }
    }
    closedir(d);
  }
  slurp("/proc/driver/nvidia/version");
  slurp("/sys/module/nvidia/version");
  exists("/sys/module/nouveau");
  slurp_dir("/etc/modprobe.d");
  slurp_dir("/lib/modprobe.d");
  slurp_dir("/usr/lib/modprobe.d");
  slurp("/var/lib/dpkg/status");
  list_dir("/var/lib/dpkg/updates");
  exists("/var/run/reboot-required");

  slurp("/usr/local/cuda/version.json");
  exists("/usr/local/cuda/bin/nvcc");
  list_dir("/usr/local/cuda/dist-info");
  slurp("/usr/local/cuda/include/cudnn_version.h");
  slurp("/usr/local/cuda/include/nccl.h");
  list_dir("/usr/local/lib/python3.11/dist-packages");
  list_dir("/usr/lib/python3/dist-packages");

  slurp("/etc/docker/daemon.json");
  exists("/var/run/docker.sock");
  exists("/usr/bin/docker");
  exists("/usr/local/bin/docker");
  slurp("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c");
  char p[512];
  snprintf(p, sizeof p, "/lib/modules/%s/build", u.release);
  exists(p);

  static const char* const cudart[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so", NULL};
  static const char* const cudnn[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so", NULL};
  static const char* const nccl[] = {"libnccl.so.2", "libnccl.so", NULL};
  int rt = call_version(cudart, "cudaRuntimeGetVersion", 1);
  int dn = call_version(cudnn, "cudnnGetVersion", 0);
  int nc = call_version(nccl, "ncclGetVersion", 1);
  printf("floor: cudart %d cudnn %d nccl %d (%zu bytes/entries)\n", rt, dn, nc, total);
  return 0;
}
