// TEMPORARY scaffolding: the owner of each seam deletes its stub here when adding the real file.
#include "sys/http.h"
#include "sys/native.h"

namespace gp::sys {

LibCall DlopenNativeLibs::CudaRuntimeVersion(const std::vector<std::string>&) { return {}; }
LibCall DlopenNativeLibs::CudnnVersion(const std::vector<std::string>&) { return {}; }
LibCall DlopenNativeLibs::NcclVersion(const std::vector<std::string>&) { return {}; }
NvmlInfo DlopenNativeLibs::Nvml() { return {}; }
CudaDriverInfo DlopenNativeLibs::CudaDriver() { return {}; }
std::unique_ptr<HttpClient> MakeCurlHttpClient() { return nullptr; }
HttpResponse RealUnixHttp::Get(const std::string&, const std::string&, std::chrono::milliseconds) {
  return {0, "", "not built yet"};
}

}  // namespace gp::sys
