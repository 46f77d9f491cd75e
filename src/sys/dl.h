// dlopen and dlsym in one place, for the libraries gpuprep loads on first use (libcurl, libcrypto,
// libarchive: DlLoadOnce) and NVIDIA's (sys/native.cc, sys/nvml_session.cc). Nothing here is ever
// dlclose'd: a library may have started threads.
#pragma once
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace gp::sys {

// The distribution's libraries gpuprep itself loads, one per seam (sys/http_curl.cc, sys/sha256.cc,
// sys/archive.cc); not the NVIDIA libraries it probes, which the driver and CUDA bring. The package depends
// on each: packaging/build-deb.sh and check-binary.sh read this list (one `kLib... = "SONAME";` per line),
// and tests/integration/package_checks.sh checks that every DlOpen and DlLoadOnce names one of these.
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

// dlopen(file, mode) for callers that try several files in turn (sys/native.cc): on failure, `error` is
// dlerror's text as it is (no prefix; "" in the unlikely case that dlerror has none).
DlHandle DlOpenFile(const std::string& file, int mode);

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

// A seam's entry points, loaded once per process on first use (the one dlopen block the lazily loaded
// seams share). The first call opens `soname` (DlOpen) and calls bind(handle, api), which binds each
// symbol the seam needs (DlBind) and returns false when one it cannot do without is missing. `Api` has
// `void* handle` (null when loading failed: no entry point may then be called) and `std::string error`
// ("cannot load SONAME: <dlerror>", or "SONAME lacks `missing`"). Thread-safe: every call returns the same
// value, bound once.
template <typename Api>
const Api& DlLoadOnce(const char* soname, const char* missing, bool (*bind)(void* handle, Api& api)) {
  static Api api;
  static std::once_flag once;
  std::call_once(once, [&] {
    DlHandle lib = DlOpen(soname);
    if (!lib.handle) {
      api.error = lib.error;
    } else if (!bind(lib.handle, api)) {
      api.error = std::string(soname) + " lacks " + missing;
    } else {
      api.handle = lib.handle;
    }
  });
  return api;
}

}  // namespace gp::sys
