// NVIDIA's redistrib_<release>.json (the index beside the .tar.xz archives of
// https://developer.download.nvidia.com/compute/cudnn/redist/ and .../compute/cuda/redist/): parsed and
// validated, since it comes from the network or a file share and names paths gpuprep will fetch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gp::redist {

// One archive for one platform (and, for cuDNN 9, one CUDA major).
struct RedistArchive {
  std::string component;      // "cudnn", "cuda_cudart"
  std::string version;        // the component's version ("9.12.0.46")
  std::string release_label;  // the file's release_label ("9.12.0")
  std::string relative_path;  // "cudnn/linux-x86_64/cudnn-linux-x86_64-9.12.0.46_cuda12-archive.tar.xz"
  std::string sha256;         // 64 lower-case hex digits
  uint64_t size = 0;          // bytes
  std::string top_dir;        // the archive's single top directory: the file name without ".tar.xz"
};

// The archive of `component` for `platform` ("linux-x86_64", "linux-sbsa") and, where the JSON has the
// per-CUDA level (cuDNN 9: "cuda12"), `cuda_major`. Throws RedistError naming the JSON key that is missing or
// wrong: not JSON, no such component/platform/variant, a relative_path that is absolute, climbs with "..",
// has characters outside [A-Za-z0-9._+-/] or is not a .tar.xz, a sha256 that is not 64 hex digits, a size
// that is not a decimal string.
RedistArchive FindArchive(const std::string& json_text, const std::string& component,
                          const std::string& platform, std::optional<int> cuda_major);

// The redistrib platform key for a machine architecture (uname -m): x86_64 -> linux-x86_64,
// aarch64 -> linux-sbsa, ppc64le -> linux-ppc64le; "" for others.
std::string PlatformFor(const std::string& arch);

// True when `found` is `pinned` or extends it at a dot (pinned 9.12.0 matches 9.12.0.46).
bool VersionMatches(const std::string& found, const std::string& pinned);

// Why `a` is not the version the stack pins, or "". The component's own version is what is checked; the
// file's release_label never stands in for it. cuDNN: the component extends the pin (9.12.0 -> 9.12.0.46).
// CUDA (`layer` "cuda"): the pin is the toolkit release, so the file's release_label must be it, and the
// runtime and compiler (cuda_cudart, cuda_nvcc) carry its major.minor (redistrib_12.2.2.json: 12.2.140); the
// libraries keep their own numbering, which the release does not give.
std::string VersionProblem(const RedistArchive& a, const std::string& layer, const std::string& pinned);

}  // namespace gp::redist
