// Every pure probe parser (probe/parsers.h) on the same bytes: files under /proc, /sys, /etc, headers,
// JSON from the Docker Engine and NVIDIA's version.json. Never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probe/parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gp::probe;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)ParseOsRelease(in);
  (void)ParseMemTotal(in);
  (void)CountCpuinfoProcessors(in);
  (void)CountCpuList(in);
  (void)ParseShmSizeFromMounts(in, 1ULL << 40);
  (void)ArchFromDpkg(in);
  (void)ArchFromElf(in);
  (void)ParseNvrmVersion(in);
  (void)LibVersionFromName(in, "libnvidia-ml.so.");
  (void)BlacklistsNouveau(in);
  (void)ParseSecureBootVar(in);
  (void)ParseCudaVersionJson(in);
  (void)ParseNvccVersion(in);
  (void)HeaderDefine(in, "CUDNN_MAJOR");
  (void)ParseCudnnHeader(in);
  (void)ParseNcclHeader(in);
  (void)ParseDistInfoName(in);
  (void)CudaMajorFromDebVersion(in);
  (void)CudaMajorFromPackageName(in);
  for (const auto& e : ParseDpkgStatus(in)) {
    (void)IsNvidiaRelatedPackage(e.package);
    (void)DpkgInstalled(e.status);
    (void)DpkgInterrupted(e.status);
  }
  (void)ParseCtkVersion(in);
  (void)ParseDaemonJson(in);
  (void)ParseDockerVersionBody(in);
  (void)ParseDockerInfoBody(in);
  (void)ParseCdiSpec(in, true);
  (void)ParseCdiSpec(in, false);
  return 0;
}
