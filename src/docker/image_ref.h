// Image references as the Docker client uses them (the grammar itself: util/image_ref.h), and the CUDA an
// image declares in its config's environment (CUDA_VERSION, CUDA_DRIVER_VERSION).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/image_ref.h"

namespace gp::docker {

// The reference grammar, the mirror and the pull reference live in util/image_ref.h, shared with manifest
// loading and launch; these names keep the Docker client's spelling.
using gp::ImagePullReference;
using gp::ImageRef;
using gp::ParseImageRef;
using gp::PullReference;
using gp::ValidDigest;

// NGC's four-part CUDA_VERSION ("12.2.2.009") -> "12.2.2"; "12.4.1" and "13.0" stay; nullopt when not a
// version.
std::optional<std::string> NormalizeCudaVersion(std::string_view raw);

struct ImageCudaEnv {
  std::string cuda;      // normalised "12.2.2"; "" when the image declares none
  std::string cuda_raw;  // as declared: "12.2.2.009"
  std::string driver;    // CUDA_DRIVER_VERSION ("535.104.05"): the driver the image's CUDA was built with;
                         // "" when absent or not a version
  std::string require;   // NVIDIA_REQUIRE_CUDA ("cuda>=9.0" in NGC framework images: only a floor), at
                         // most 512 printable bytes, else ""
};
// From an image config's Env ("KEY=VALUE" strings).
ImageCudaEnv CudaFromEnv(const std::vector<std::string>& env);

}  // namespace gp::docker
