// Will the image's CUDA run on the host's driver? Doctor's rule itself (verdict::DriverRunsCuda, on the same
// Compat facts, from NVIDIA's CUDA Toolkit release notes and
// https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html): the driver meets the
// minimum of the image's exact CUDA release (Table 3); or, below it, the driver is on a branch that CUDA's
// minor-version compatibility covers for that CUDA major (Table 2); or, on data-center GPUs only, the driver
// is on one of the branches the image's release notes allow in forward-compatibility mode. On top of it, the
// branch the image's release notes require ("requires NVIDIA Driver release 545 or later"), which only
// forward compatibility can waive.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"

namespace gp::launch {

struct ImageCuda {
  std::string ref;
  std::optional<Version> cuda;  // nullopt: unknown image, nothing can be checked
  std::optional<int> driver_min_branch;
  std::vector<Version> forward_compat;
};

// The stack's image as apply pulls it: name:tag@digest when the stack pins a digest, on its mirror when it
// names one (docker/image_ref.h PullReference); the plain reference otherwise.
std::string StackImageRef(const manifest::Stack& stack);

// The CUDA facts for `ref`: the stack's image when it is that image, else compat's image list.
ImageCuda ImageCudaFor(const std::string& ref, const manifest::Stack* stack, const manifest::Compat& compat);

struct DriverVerdict {
  enum class Kind { kOk, kWarn, kTooOld, kUnknown } kind = Kind::kUnknown;  // kWarn: runs, with a caveat
  std::string message;  // kTooOld: the error text (without the flag); others: a note or warning
};

// `all_datacenter`: every GPU the container gets is a data-center part (forward compatibility needs it).
DriverVerdict CheckDriver(const ImageCuda& image, const std::optional<Version>& driver, bool all_datacenter,
                          const manifest::Compat& compat);

}  // namespace gp::launch
