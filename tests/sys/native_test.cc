// DlopenNativeLibs against the real libraries of the build machine (CUDA 13.0, cuDNN 9, NCCL 2 in
// ld.so.cache; no NVIDIA driver, so no libnvidia-ml and no libcuda).
#include <unistd.h>

#include <catch2/catch.hpp>

#include "sys/native.h"
#include "util/version.h"

using namespace gp;

TEST_CASE("DlopenNativeLibs on the build machine: cudart, cuDNN, NCCL load; NVML and libcuda do not", "[probe][live]") {
  if (::access("/usr/local/cuda-13.0/lib/libcudart.so.13", F_OK) != 0) {
    WARN("not the build machine: skipped");
    return;
  }
  sys::DlopenNativeLibs libs;
  auto cudart = libs.CudaRuntimeVersion({"/nonexistent/lib64"});
  CHECK(cudart.loaded);
  REQUIRE(cudart.value);
  CHECK(*cudart.value / 1000 == 13);
  CHECK(cudart.path.find("libcudart.so.13") != std::string::npos);

  auto cudnn = libs.CudnnVersion({});
  CHECK(cudnn.loaded);
  REQUIRE(cudnn.value);
  CHECK(CudnnVersionFromCode(*cudnn.value).rfind("9.", 0) == 0);
  CHECK(cudnn.path[0] == '/');

  auto nccl = libs.NcclVersion({});
  CHECK(nccl.loaded);
  REQUIRE(nccl.value);
  CHECK(NcclVersionFromCode(*nccl.value).rfind("2.", 0) == 0);

  auto nvml = libs.Nvml();
  CHECK_FALSE(nvml.loaded);
  CHECK(nvml.error.find("libnvidia-ml.so") != std::string::npos);
  auto cuda = libs.CudaDriver();
  CHECK_FALSE(cuda.loaded);
  CHECK_FALSE(cuda.device_count);
}
