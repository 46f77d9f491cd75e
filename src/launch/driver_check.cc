#include "launch/driver_check.h"

namespace gp::launch {

ImageCuda ImageCudaFor(const std::string& ref, const manifest::Stack* stack, const manifest::Compat& compat) {
  ImageCuda out;
  out.ref = ref;
  if (stack && stack->image.ref == ref) {
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

DriverVerdict CheckDriver(const ImageCuda& image, const std::optional<Version>& driver, bool all_datacenter,
                          const manifest::Compat& compat) {
  DriverVerdict v;
  if (!image.cuda && !image.driver_min_branch) {
    v.message = "the CUDA version inside " + image.ref + " is not known to gpuprep; the driver was not checked";
    return v;
  }
  if (!driver) {
    v.message = "the host's NVIDIA driver version is unknown; the driver was not checked";
    return v;
  }
  const std::optional<Version> exact = image.cuda ? compat.MinDriverFor(*image.cuda) : std::nullopt;
  const bool branch_ok = !image.driver_min_branch || static_cast<int>(driver->major()) >= *image.driver_min_branch;
  const std::string need = image.cuda ? "CUDA " + image.cuda->str() : image.ref;
  if (branch_ok && (!exact || *driver >= *exact)) {
    v.kind = DriverVerdict::Kind::kOk;
    return v;
  }
  if (branch_ok && image.cuda) {
    if (const manifest::MinorCompat* mc = compat.MinorCompatFor(static_cast<int>(image.cuda->major()))) {
      const bool in_range = static_cast<int>(driver->major()) >= mc->min_branch &&
                            (!mc->exact_min || *driver >= *mc->exact_min);
      if (in_range) {
        v.kind = DriverVerdict::Kind::kMinorCompat;
        v.message = "driver " + driver->str() + " is older than " + need + "'s " + exact->str() +
                    "; it runs through CUDA minor-version compatibility (PTX JIT of newer code will fail)";
        return v;
      }
    }
  }
  for (const Version& fc : image.forward_compat) {
    if (fc.major() == driver->major() && *driver >= fc) {
      if (all_datacenter) {
        v.kind = DriverVerdict::Kind::kForwardCompat;
        v.message = "driver " + driver->str() + " runs " + need + " in forward-compatibility mode (data-center GPUs)";
        return v;
      }
      v.kind = DriverVerdict::Kind::kTooOld;
      v.message = image.ref + " needs " + need + "; driver " + driver->str() +
                  " could run it only in forward-compatibility mode, which needs data-center GPUs";
      return v;
    }
  }
  v.kind = DriverVerdict::Kind::kTooOld;
  std::string wanted = exact ? "NVIDIA driver >= " + exact->str()
                             : "NVIDIA driver branch >= " + std::to_string(*image.driver_min_branch);
  v.message = image.ref + " needs " + need + " (" + wanted + "); the host's driver is " + driver->str();
  return v;
}

}  // namespace gp::launch
