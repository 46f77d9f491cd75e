// dlopen and dlsym in one place, for the libraries gpuprep loads on first use (libcurl, libcrypto,
// libarchive) and NVIDIA's (sys/native.cc). Nothing here is ever dlclose'd: a library may have started
// threads.
#pragma once
#include <dlfcn.h>

#include <string>

namespace gp::sys {

// The distribution's libraries gpuprep itself loads, one per seam (sys/http_curl.cc, sys/sha256.cc,
// sys/archive.cc); not the NVIDIA libraries it probes, which the driver and CUDA bring. The package depends
// on each: packaging/build-deb.sh and check-binary.sh read this list (one `kLib... = "SONAME";` per line),
// and tests/integration/package_checks.sh checks that every DlOpen in src/sys/ names one of these.
inline constexpr const char* kLibcurlSoname = "libcurl.so.4";
inline constexpr const char* kLibcryptoSoname = "libcrypto.so.3";
inline constexpr const char* kLibarchiveSoname = "libarchive.so.13";
// NVIDIA's libraries, which the driver brings (never in the package's Depends), one kNvidia...Soname each.
inline constexpr const char* kNvidiaMlSoname = "libnvidia-ml.so.1";  // watch's NVML session

struct DlHandle {
  void* handle = nullptr;  // null when the library could not be loaded
  std::string error;       // "cannot load SONAME: <dlerror>" when handle is null
};

// dlopen(soname, RTLD_NOW | RTLD_LOCAL).
DlHandle DlOpen(const char* soname);

// Looks `name` up in `handle` and stores it in `fn` (a function pointer); false when it is missing.
template <typename F>
bool DlBind(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(handle, name));
  return fn != nullptr;
}

// The same lookup, returning the pointer (null when missing).
template <typename F>
F DlSym(void* handle, const char* name) {
  return reinterpret_cast<F>(::dlsym(handle, name));
}

}  // namespace gp::sys
