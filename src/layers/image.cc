// image layer: "will this image run here?" The image's CUDA against the driver (with the image's
// forward-compatibility list on data-center GPUs) and against each GPU's compute capability. Whether the
// image is pulled is not probed.
#include "layers/check.h"
#include "layers/rules.h"

namespace gp::layers {

LayerReport CheckImage(const CheckInput& in) {
  LayerReport r;
  r.name = "image";
  const manifest::ImageSpec& img = in.stack.image;
  r.wanted = img.ref;
  if (img.ref.empty()) {
    r.Add(Status::kSkip, "stack " + in.stack.name + " names no image");
    return r;
  }
  const manifest::ImageFacts* facts = in.compat.ImageByRef(img.ref);
  manifest::Pinned cuda = img.cuda;
  if (!cuda.known() && !cuda.unknown && facts) cuda = facts->cuda;
  if (!cuda.known()) {
    r.Add(Status::kSkip,
          "the CUDA inside " + img.ref + " is unknown" + (cuda.reason.empty() ? "" : ": " + cuda.reason));
    return r;
  }
  std::vector<Version> forward = img.forward_compat;
  if (forward.empty() && facts) forward = facts->forward_compat;
  const Version& v = *cuda.version;
  std::string what = "image CUDA " + v.str();
  CheckCudaAgainstGpus(in.compat, in.host, v, what,
                       "choose a stack whose image supports these GPUs: gpuprep manifest list", r);
  auto dv = HostDriverVersion(in.host);
  if (!dv) {
    r.Add(Status::kSkip, "no NVIDIA driver to run " + img.ref + " (see the driver layer)");
    return r;
  }
  CudaVerdict verdict = DriverRunsCuda(in.compat, *dv, v, what, AllDatacenter(in.compat, in.host), forward);
  // NGC images are built to run under minor-version compatibility: that is a supported configuration, not
  // a degraded one (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
  if (verdict.minor_compat) {
    verdict.status = Status::kOk;
    verdict.message = "driver " + dv->str() + " runs " + what + " under CUDA " + std::to_string(v.major()) +
                      ".x minor-version compatibility (the image's own minimum is " +
                      (verdict.min_driver ? verdict.min_driver->str() : std::string("unknown")) + ")";
  }
  r.Add(verdict.status, verdict.message,
        verdict.status == Status::kOk ? std::nullopt : std::optional<std::string>(ApplyFix("driver")));
  return r;
}

}  // namespace gp::layers
