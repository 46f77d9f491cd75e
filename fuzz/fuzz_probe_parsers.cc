// Every pure probe parser (probe/parsers.h, probe/vpd.h) on the same bytes: files under /proc, /sys, /etc,
// headers, JSON from the Docker Engine, NVIDIA's version.json and a PCI function's VPD. Never a crash, a hang
// or an exception; a VPD is valid exactly when it gives no reason, keeps within its bytes, and parses the
// same twice; only a valid one can mark a bridge.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probe/parsers.h"
#include "probe/vpd.h"

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
  const Vpd vpd = ParseVpd(in);
  if (vpd.valid != vpd.error.empty()) std::abort();
  if (vpd.valid && in.size() > kMaxVpdBytes) std::abort();
  size_t kept = vpd.identifier.size();
  for (const VpdKeyword& k : vpd.keywords) {
    if (k.keyword.size() != 2) std::abort();
    kept += k.value.size();
  }
  if (kept > in.size()) std::abort();  // nothing comes from outside the bytes read
  const Vpd again = ParseVpd(in);
  if (again.valid != vpd.valid || again.error != vpd.error || again.keywords.size() != vpd.keywords.size())
    std::abort();
  if (IsNvlinkSwitchBridge(vpd) && !vpd.valid) std::abort();
  return 0;
}
