// Image references as Docker reads them ([DOMAIN/]PATH[:TAG][@DIGEST], docker.io and library/ implied, the
// grammar of Docker's distribution/reference; docs/values.md lists where gpuprep is stricter),
// the reference apply pulls (pinned by digest, rewritten onto a registry mirror), and the CUDA an image
// declares in its config's environment (CUDA_VERSION, CUDA_DRIVER_VERSION).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::docker {

struct ImageRef {
  std::string domain;  // "nvcr.io", "docker.io", "mirror.local:5000"
  std::string path;    // "nvidia/pytorch", "library/ubuntu"
  std::string tag;     // "23.10-py3"; "" when the reference has none (and no digest: "latest")
  std::string digest;  // "sha256:<64 hex>"; "" when none
  std::string Name() const { return domain + "/" + path; }
  // name[:tag][@digest], with docker.io and library/ spelled out (Docker's normalised form).
  std::string str() const;
  // The form Docker shows: docker.io/ dropped, and library/ for a one-component path ("ubuntu:22.04").
  std::string Familiar() const;
};

// "sha256:" and 64 lower-case hex digits (the only digest gpuprep checks).
bool ValidDigest(std::string_view d);

// nullopt when `text` is not a reference as Docker reads it (empty, an upper-case path, a bad host, path
// component, tag or digest, 64 hex digits, which Docker takes for an image id, a path over 255 bytes), and,
// stricter than Docker: a digest other than sha256, a first component with '.' or ':' that is not a valid
// registry host, or a text over 1024 bytes. "index.docker.io/x" is "docker.io/library/x".
std::optional<ImageRef> ParseImageRef(std::string_view text);

// What apply pulls and launch runs. Without a mirror: the reference, with `digest` (when given) added or
// checked against the reference's own. With a mirror ("HOST[:PORT][/PREFIX]"): PREFIX/PATH on the mirror,
// pinned by digest (a digest is required: the mirror is trusted only to serve the same bytes). Throws
// gp::Error (exit 2) when the digests disagree or a mirror has no digest to pin.
std::string PullReference(const ImageRef& ref, const std::string& digest, const std::string& mirror);

// PullReference for a stack's image.ref/digest/mirror: `ref` as written when neither digest nor mirror is
// set; "" when `ref` is not a reference.
std::string ImagePullReference(const std::string& ref, const std::string& digest, const std::string& mirror);

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
