// image layer: "will this image run here?" The image's CUDA against the driver (with the image's
// forward-compatibility list on data-center GPUs) and against each GPU's compute capability. Whether the
// image is pulled is not probed.
#include "layers/check.h"

#include "layers/image/image.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

namespace {

// The CUDA inside the image: the stack's, else the compat table's (`facts`), outranked by the image's own
// config's CUDA_VERSION when the local engine has the image or its registry was read (`from` then says so).
manifest::Pinned ImageCudaInside(const CheckInput& in, const manifest::ImageFacts* facts, std::string& from) {
  const manifest::ImageSpec& img = in.stack.image;
  manifest::Pinned cuda = img.cuda;
  if (!cuda.known() && !cuda.unknown && facts) cuda = facts->cuda;
  // The image itself, when the local engine has it or its registry was read (--registry): its config's
  // CUDA_VERSION outranks every table.
  const probe::ImageInfo& local = in.host.docker.image;
  const bool read = local.present || local.from_registry;
  const std::string where = local.present ? "" : ", read from its registry";
  if (read && !local.cuda.empty()) {
    if (auto v = Version::Parse(local.cuda)) {
      cuda = manifest::Pinned{v, false, "CUDA_VERSION=" + local.cuda_raw + " in the image's config"};
      from = " (the image's CUDA_VERSION " + local.cuda_raw + where + ")";
    }
  } else if (read && !cuda.known()) {
    cuda.reason +=
        std::string(cuda.reason.empty() ? "" : "; ") + "the image's config declares no CUDA_VERSION" + where;
  }
  return cuda;
}

// The image as the host has it: its registry unreadable, not pulled, or pulled at another digest than the
// stack pins.
void CheckImageOnHost(const CheckInput& in, LayerReport& r) {
  const manifest::ImageSpec& img = in.stack.image;
  const probe::ImageInfo& local = in.host.docker.image;
  if (!local.registry_error.empty())
    r.Add("image.registry", Status::kWarn,
          "could not read " + local.ref + " from its registry: " + local.registry_error,
          "check the network and the image reference; doctor then judges the image by the stack's tables");
  if (local.inspected && !local.present) {
    r.Add(Status::kWarn, local.ref + " is not pulled", ApplyFix("image"));
  } else if (local.present) {
    r.found = local.digest.empty() ? "pulled" : local.digest;
    if (!img.digest.empty() && !local.digest.empty() && local.digest != img.digest)
      r.Add(Status::kFail, local.ref + " is " + local.digest + " but the stack pins " + img.digest,
            ApplyFix("image"));
  }
}

// The image's CUDA `v` (described as `what`) under driver `dv`, with the image's forward-compatibility list.
void CheckImageUnderDriver(const CheckInput& in, const Version& dv, const Version& v, const std::string& what,
                           const std::vector<Version>& forward, LayerReport& r) {
  CudaVerdict verdict = DriverRunsCuda(in.compat, dv, v, what, AllDatacenter(in.compat, in.host), forward);
  // NGC images are built to run under minor-version compatibility: that is a supported configuration, not
  // a degraded one (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
  if (verdict.minor_compat) {
    verdict.status = Status::kOk;
    verdict.message = "driver " + dv.str() + " runs " + what + " under CUDA " + std::to_string(v.major()) +
                      ".x minor-version compatibility (the image's own minimum is " +
                      (verdict.min_driver ? verdict.min_driver->str() : std::string("unknown")) + ")";
  }
  r.Add("image.driver-compat", verdict.status, verdict.message,
        verdict.status == Status::kOk ? std::nullopt : std::optional<std::string>(ApplyFix("driver")));
}

}  // namespace

LayerReport CheckImage(const CheckInput& in) {
  LayerReport r;
  r.name = "image";
  const manifest::ImageSpec& img = in.stack.image;
  r.wanted = img.ref;
  if (img.ref.empty()) {
    r.Add("image.not-in-stack", Status::kSkip, "stack " + in.stack.name + " names no image");
    return r;
  }
  const manifest::ImageFacts* facts = in.compat.ImageByRef(img.ref);
  std::string from;
  const manifest::Pinned cuda = ImageCudaInside(in, facts, from);
  CheckImageOnHost(in, r);
  if (!cuda.known()) {
    r.Add("image.cuda-unknown", Status::kSkip,
          "the CUDA inside " + img.ref + " is unknown" + (cuda.reason.empty() ? "" : ": " + cuda.reason));
    return r;
  }
  std::vector<Version> forward = img.forward_compat;
  if (forward.empty() && facts) forward = facts->forward_compat;
  const Version& v = *cuda.version;
  std::string what = "image CUDA " + v.str() + from;
  CheckCudaAgainstGpus(in.compat, in.host, v, what,
                       "choose a stack whose image supports these GPUs: gpuprep manifest list", r);
  auto dv = HostDriverVersion(in.host);
  if (!dv) {
    r.Add("image.no-driver", Status::kSkip, "no NVIDIA driver to run " + img.ref + " (see the driver layer)");
    return r;
  }
  CheckImageUnderDriver(in, *dv, v, what, forward, r);
  return r;
}

extern const Layer kImageLayer = {"image",
                                  CheckImage,
                                  nullptr,
                                  PlanImage,
                                  VerifyImage,
                                  [](const manifest::Stack& s, const probe::HostFacts& h) {
                                    return h.docker.engine_reachable && !s.image.ref.empty();
                                  }};

}  // namespace gp::layers
