#include "docker/image_ref.h"

#include "util/strings.h"
#include "util/version.h"

namespace gp::docker {
std::optional<std::string> NormalizeCudaVersion(std::string_view raw) {
  const std::string text(Trim(raw));
  if (!Version::Parse(text)) return std::nullopt;
  auto parts = Split(text, '.');
  if (parts.size() > 3) parts.resize(3);  // NGC's fourth part is a build number
  return Join(parts, ".");
}

ImageCudaEnv CudaFromEnv(const std::vector<std::string>& env) {
  ImageCudaEnv r;
  for (const auto& kv : env) {
    if (StartsWith(kv, "CUDA_VERSION=")) {
      r.cuda = NormalizeCudaVersion(kv.substr(13)).value_or("");
      r.cuda_raw = r.cuda.empty() ? "" : std::string(Trim(kv.substr(13)));
    } else if (StartsWith(kv, "CUDA_DRIVER_VERSION=")) {
      r.driver = Version::Parse(kv.substr(20)) ? kv.substr(20) : "";
    } else if (StartsWith(kv, "NVIDIA_REQUIRE_CUDA=")) {
      r.require = kv.substr(20);
      bool printable = r.require.size() <= 512;
      for (char c : r.require) printable = printable && c >= 0x20 && c < 0x7f;
      if (!printable) r.require.clear();
    }
  }
  return r;
}

}  // namespace gp::docker
