// cuda's verify: the stack's packages held and pinned, libcuda initialises and counts every GPU, and the
// toolkit is at the pinned major.minor (its version.json and the libcudart it loads).
#include "layers/check.h"
#include "layers/cuda/cuda.h"
#include "probe/parsers.h"
#include "redist/request.h"
#include "util/version.h"

namespace gp::layers {
namespace {

// The toolkit itself: its version.json (the pinned major.minor's directory first, then /usr/local/cuda) and
// libcudart loaded from it, both at the stack's major.minor. A stack whose CUDA is optional may lack it.
void Toolkit(const apply::VerifyEnv& env, LayerReport& r) {
  const manifest::ComponentSpec& spec = env.stack->cuda;
  if (!spec.enabled || !spec.version.known()) return;
  const Version& pin = *spec.version.version;
  const std::string minor = pin.Prefix(2).str();
  std::string home;
  probe::CudaVersionJson vj;
  const std::string fix = verdict::ApplyFix("cuda");
  if (spec.source == "redist") {
    // gpuprep's install of NVIDIA's archives: current -> the version whose redistrib JSON it verified (the
    // archives carry no version.json); libcudart below must load from it at that version.
    const std::string current = redist::CurrentLinkFor("cuda");
    auto target = env.fs->ReadLink(current);
    if (!target || !env.fs->IsDir(current + "/lib"))
      return r.Add(Status::kFail, "the CUDA toolkit is not installed in " + current + " (source: redist)",
                   fix);
    home = current;
    vj.version = *target;
  }
  for (const std::string& dir : {"/usr/local/cuda-" + minor, std::string("/usr/local/cuda")}) {
    if (!home.empty()) break;
    if (auto text = env.fs->ReadPrefix(dir + "/version.json", 1 << 20)) {
      vj = probe::ParseCudaVersionJson(*text);
      if (!vj.version.empty()) {
        home = dir;
        break;
      }
    }
  }
  if (home.empty()) {
    if (spec.optional)
      return r.Add(Status::kSkip, "the CUDA toolkit is not installed (optional in this stack)");
    return r.Add(Status::kFail,
                 "the CUDA toolkit is not installed (no version.json under /usr/local/cuda-" + minor +
                     " or /usr/local/cuda)",
                 fix);
  }
  auto have = Version::Parse(vj.version);
  if (!have || have->Prefix(2) != pin.Prefix(2))
    return r.Add(Status::kFail,
                 "the CUDA toolkit in " + home + " is " + vj.version + " but the stack pins " + pin.str(),
                 fix);
  auto rt = env.native->CudaRuntimeVersion({home + "/lib64", home + "/lib"});
  if (!rt.loaded || !rt.value)
    return r.Add(Status::kFail,
                 "libcudart of the toolkit in " + home + " could not be loaded" +
                     (rt.error.empty() ? "" : ": " + rt.error),
                 fix);
  const std::string runtime = CudaVersionFromCode(*rt.value);
  auto rv = Version::Parse(runtime);
  if (!rv || rv->Prefix(2) != pin.Prefix(2))
    return r.Add(Status::kFail,
                 "libcudart " + runtime + " loaded from " + rt.path + " but the stack pins " + pin.str(),
                 fix);
  r.Add(Status::kOk,
        "CUDA toolkit " + vj.version + " in " + home + "; libcudart " + runtime + " loads (" + rt.path + ")");
}

}  // namespace

void VerifyCuda(const apply::VerifyEnv& env, LayerReport& r) {
  apply::PinsAndHolds(env, env.stack->cuda.packages, r);
  const size_t pci = env.facts->gpus.size();
  r.wanted = apply::PinText(env.stack->cuda.version);
  if (!env.native)
    return r.Add(Status::kSkip, "libcuda not loaded (--root: nothing of the live host is loaded)");
  auto cu = env.native->CudaDriver();
  if (!cu.loaded)
    return r.Add(Status::kFail, "libcuda could not be loaded" + (cu.error.empty() ? "" : ": " + cu.error),
                 ApplyFix("driver"));
  if (cu.driver_api_version) r.found = CudaVersionFromCode(*cu.driver_api_version);
  if (!cu.device_count)
    return r.Add(Status::kFail, "cuInit failed" + (cu.error.empty() ? "" : ": " + cu.error),
                 "reboot if the driver was just installed, else gpuprep doctor");
  if (*cu.device_count != static_cast<long>(pci))
    return r.Add(
        Status::kFail,
        "cuDeviceGetCount says " + std::to_string(*cu.device_count) + " but PCI shows " + std::to_string(pci),
        "gpuprep doctor");
  r.Add(Status::kOk, "cuInit succeeded; " + std::to_string(*cu.device_count) + " CUDA devices");
  Toolkit(env, r);
}

}  // namespace gp::layers
