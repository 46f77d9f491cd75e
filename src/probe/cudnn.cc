// cuDNN: cudnn_version.h (v8/v9 layouts, deb and tarball locations), cudnn.h (v7), dpkg libcudnn*, pip
// nvidia_cudnn_cuNN wheels, and cudnnGetVersion on the live host.
#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {

std::optional<long> HeaderDefine(std::string_view header, std::string_view name) {
  for (const auto& line : Split(header, '\n')) {
    auto t = Trim(line);
    if (!StartsWith(t, "#")) continue;
    auto words = SplitWords(t.substr(1));
    if (words.size() < 3 || words[0] != "define" || words[1] != name) continue;
    if (auto n = ParseUnsigned(words[2])) return static_cast<long>(*n);
    return std::nullopt;  // defined as an expression, not a number
  }
  return std::nullopt;
}

std::optional<std::string> ParseCudnnHeader(std::string_view header) {
  auto major = HeaderDefine(header, "CUDNN_MAJOR");
  auto minor = HeaderDefine(header, "CUDNN_MINOR");
  auto patch = HeaderDefine(header, "CUDNN_PATCHLEVEL");
  if (!major || !minor || !patch) return std::nullopt;
  return std::to_string(*major) + "." + std::to_string(*minor) + "." + std::to_string(*patch);
}

void ProbeCudnn(const ProbeEnv& env, HostFacts& facts) {
  LibrarySpec spec;
  spec.label = "cudnn";
  spec.header_names = {"cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h"};
  spec.parse_header = ParseCudnnHeader;
  spec.is_runtime_package = [](const std::string& n) {
    if (!StartsWith(n, "libcudnn")) return false;
    for (const char* extra : {"-dev", "-headers", "-static", "-samples", "-doc"}) {
      if (n.find(extra) != std::string::npos) return false;
    }
    return true;
  };
  spec.pip_prefix = "nvidia_cudnn_cu";
  spec.load = [](sys::NativeLibs& n, const std::vector<std::string>& dirs) { return n.CudnnVersion(dirs); };
  spec.from_code = CudnnVersionFromCode;
  ProbeLibrary(env, facts, spec, facts.cudnn);
}

}  // namespace gp::probe
