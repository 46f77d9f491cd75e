// The shared check behind the cudnn and nccl layers (layers/rules.h CheckCudaLibrary).
#include <algorithm>

#include "layers/check.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckCudaLibrary(const CheckInput& in, const std::string& layer, const std::string& label,
                             const manifest::ComponentSpec& spec, const probe::Component& host) {
  LayerReport r;
  r.name = layer;
  if (host.found && !host.version.empty()) r.found = host.version;
  if (spec.version.known()) r.wanted = spec.version.version->str();
  if (!spec.enabled) {
    r.Add(layer + ".not-in-stack", Status::kSkip, label + " is not part of stack " + in.stack.name);
    return r;
  }
  if (spec.version.unknown) {
    r.Add(layer + ".version-unknown", Status::kSkip,
          "the stack's " + label + " version is unknown: " + spec.version.reason);
    return r;
  }
  std::optional<Version> have = host.found ? ParseFound(host.version) : std::nullopt;
  if (!have) {
    r.Add(layer + ".missing", Status::kFail, label + " not installed", ApplyFix(layer));
    return r;
  }
  const Version& want = *spec.version.version;
  std::string installed = label + " " + have->str();
  if (have->major() != want.major())
    r.Add(layer + ".major-mismatch", Status::kFail,
          installed + " is another major than the stack's " + want.str(), ApplyFix(layer));
  // cudnn_version.h and the libraries give three parts (9.12.0) where the stack pins four (9.12.0.46):
  // compare the parts both have, at least major.minor.patch.
  else if (have->Prefix(std::max<size_t>(std::min(have->size(), want.size()), 3)) !=
           want.Prefix(std::max<size_t>(std::min(have->size(), want.size()), 3)))
    r.Add(layer + ".version-mismatch", Status::kWarn, installed + " differs from the stack's " + want.str(),
          ApplyFix(layer));
  else
    r.Add(layer + ".match", Status::kOk, installed + " matches the stack's " + want.str());

  std::optional<int> expected = spec.cuda_major;
  if (!expected && in.stack.cuda.enabled && in.stack.cuda.version.known())
    expected = static_cast<int>(in.stack.cuda.version.version->major());
  if (host.cuda_major) {
    std::string built = installed + " is built for CUDA " + std::to_string(*host.cuda_major);
    auto host_cuda = in.host.cuda.found ? ParseFound(in.host.cuda.version) : std::nullopt;
    if (expected && *expected != *host.cuda_major)
      r.Add(layer + ".cuda-mismatch", Status::kFail,
            built + "; the stack's is CUDA " + std::to_string(*expected), ApplyFix(layer));
    else if (host_cuda && static_cast<int>(host_cuda->major()) != *host.cuda_major)
      r.Add(layer + ".cuda-mismatch", Status::kFail, built + " but the installed CUDA is " + host_cuda->str(),
            ApplyFix(layer));
  }
  return r;
}

}  // namespace gp::layers
