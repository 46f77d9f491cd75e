// DlopenNativeLibs against whatever this machine has: invariants that hold with or without a GPU, a
// driver or a CUDA toolkit. Each answer is checked against an independent dlopen of the same library.
#include "sys/native.h"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "util/version.h"

using namespace gp;

namespace {
// Whether any of `sonames` opens with the default search path (the test's own, independent look).
bool Opens(std::initializer_list<const char*> sonames) {
  for (const char* s : sonames)
    if (void* h = ::dlopen(s, RTLD_LAZY | RTLD_LOCAL)) {
      ::dlclose(h);
      return true;
    }
  return false;
}

void CheckCall(const sys::LibCall& c, bool independently_opens, const char* stem) {
  INFO(stem << ": loaded=" << c.loaded << " path=" << c.path << " error=" << c.error);
  if (independently_opens) CHECK(c.loaded);  // the seam searches at least the default path
  if (c.loaded) {
    CHECK(c.path.find(stem) != std::string::npos);
    CHECK(c.path[0] == '/');
  } else {
    CHECK_FALSE(c.value);
    CHECK_FALSE(c.error.empty());
  }
}
}  // namespace

TEST_CASE("DlopenNativeLibs: answers agree with an independent dlopen on this machine", "[probe][live]") {
  sys::DlopenNativeLibs libs;
  auto cudart = libs.CudaRuntimeVersion({"/nonexistent/lib64"});
  CheckCall(cudart, Opens({"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}),
            "libcudart.so");
  if (cudart.value) CHECK(*cudart.value / 1000 >= 10);  // cudaRuntimeGetVersion: 1000*major + 10*minor

  auto cudnn = libs.CudnnVersion({});
  CheckCall(cudnn, Opens({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}), "libcudnn.so");
  if (cudnn.value) CHECK(Version::Parse(CudnnVersionFromCode(*cudnn.value)).has_value());

  auto nccl = libs.NcclVersion({});
  CheckCall(nccl, Opens({"libnccl.so.2", "libnccl.so"}), "libnccl.so");
  if (nccl.value) CHECK(NcclVersionFromCode(*nccl.value).rfind("2.", 0) == 0);

  auto nvml = libs.Nvml({});
  const bool nvml_here = Opens({"libnvidia-ml.so.1"});
  CHECK(nvml.loaded == nvml_here);
  if (!nvml.loaded) CHECK(nvml.error.find("libnvidia-ml.so") != std::string::npos);
  if (nvml.driver_version) CHECK(Version::Parse(*nvml.driver_version).has_value());

  auto cuda = libs.CudaDriver();
  CHECK(cuda.loaded == Opens({"libcuda.so.1"}));
  if (!cuda.loaded) CHECK_FALSE(cuda.device_count);
}
