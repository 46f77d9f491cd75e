#include "launch/driver_check.h"

#include "docker/image_ref.h"
#include "verdict/rules.h"

namespace gp::launch {

std::string StackImageRef(const manifest::Stack& stack) {
  std::string ref = docker::ImagePullReference(stack.image.ref, stack.image.digest, stack.image.mirror);
  return ref.empty() ? stack.image.ref : ref;
}

ImageCuda ImageCudaFor(const std::string& ref, const manifest::Stack* stack, const manifest::Compat& compat) {
  ImageCuda out;
  out.ref = ref;
  if (stack && (stack->image.ref == ref || StackImageRef(*stack) == ref)) {
    if (stack->image.cuda.known()) out.cuda = *stack->image.cuda.version;
    out.driver_min_branch = stack->image.driver_min_branch;
    out.forward_compat = stack->image.forward_compat;
  }
  if (const manifest::ImageFacts* f = compat.ImageByRef(ref)) {
    if (!out.cuda && f->cuda.known()) out.cuda = *f->cuda.version;
    if (!out.driver_min_branch) out.driver_min_branch = f->driver_min_branch;
    if (out.forward_compat.empty()) out.forward_compat = f->forward_compat;
  }
  return out;
}

namespace {
// A forward-compatibility entry V admits V or later on V's branch (as doctor reads them).
bool ForwardCompatAdmits(const std::vector<Version>& fc, const Version& driver) {
  for (const Version& v : fc)
    if (v.major() == driver.major() && driver >= v) return true;
  return false;
}
}  // namespace

DriverVerdict CheckDriver(const ImageCuda& image, const std::optional<Version>& driver, bool all_datacenter,
                          const manifest::Compat& compat) {
  DriverVerdict v;
  if (!image.cuda && !image.driver_min_branch) {
    v.message = "the CUDA version inside " + image.ref +
                " is not known to gpuprep; the driver was not checked (--registry reads it from the image's "
                "registry)";
    return v;
  }
  if (!driver) {
    v.message = "the host's NVIDIA driver version is unknown; the driver was not checked";
    return v;
  }
  const std::string d = "driver " + driver->str();
  if (image.driver_min_branch && static_cast<int>(driver->major()) < *image.driver_min_branch) {
    const std::string needs =
        image.ref + " requires NVIDIA driver R" + std::to_string(*image.driver_min_branch) + " or later";
    if (ForwardCompatAdmits(image.forward_compat, *driver)) {
      v.kind = all_datacenter ? DriverVerdict::Kind::kWarn : DriverVerdict::Kind::kTooOld;
      v.message = all_datacenter ? needs + ": " + d +
                                       " runs it only in CUDA forward-compatibility mode (data-center GPUs)"
                                 : needs + "; " + d +
                                       " could run it only in forward-compatibility mode, which needs "
                                       "data-center GPUs";
      return v;
    }
    v.kind = DriverVerdict::Kind::kTooOld;
    v.message = needs + "; the host has " + d;
    return v;
  }
  if (!image.cuda) {
    v.kind = DriverVerdict::Kind::kOk;
    return v;
  }
  const verdict::CudaVerdict cv =
      verdict::DriverRunsCuda(compat, *driver, *image.cuda, image.ref + "'s CUDA " + image.cuda->str(),
                              all_datacenter, image.forward_compat);
  switch (cv.status) {
    case verdict::Status::kOk:
      v.kind = DriverVerdict::Kind::kOk;
      return v;
    case verdict::Status::kFail:
      v.kind = DriverVerdict::Kind::kTooOld;
      break;
    default:
      v.kind = DriverVerdict::Kind::kWarn;
      break;
  }
  v.message = cv.message;
  return v;
}

}  // namespace gp::launch
