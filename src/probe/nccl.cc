// NCCL: nccl.h, dpkg libnccl2 (+cudaX.Y), pip nvidia_nccl_cuNN wheels, and ncclGetVersion on the live host.
#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/version.h"

namespace gp::probe {

std::optional<std::string> ParseNcclHeader(std::string_view header) {
  auto major = HeaderDefine(header, "NCCL_MAJOR");
  auto minor = HeaderDefine(header, "NCCL_MINOR");
  auto patch = HeaderDefine(header, "NCCL_PATCH");
  if (!major || !minor || !patch) return std::nullopt;
  return std::to_string(*major) + "." + std::to_string(*minor) + "." + std::to_string(*patch);
}

void ProbeNccl(const ProbeEnv& env, HostFacts& facts) {
  LibrarySpec spec;
  spec.label = "nccl";
  spec.header_names = {"nccl.h"};
  spec.parse_header = ParseNcclHeader;
  spec.is_runtime_package = [](const std::string& n) { return n == "libnccl2"; };
  spec.pip_prefix = "nvidia_nccl_cu";
  spec.load = [](sys::NativeLibs& n, const std::vector<std::string>& dirs) { return n.NcclVersion(dirs); };
  spec.from_code = NcclVersionFromCode;
  ProbeLibrary(env, facts, spec, facts.nccl);
}

}  // namespace gp::probe
