// Image references as Docker reads them ([DOMAIN/]PATH[:TAG][@DIGEST], docker.io and library/ implied), a
// registry mirror, the reference apply pulls (pinned by digest, rewritten onto the mirror) and a container's
// working directory: the one grammar and the one check per value that manifest loading, profiles, plan,
// apply, launch and the Docker client all use. The grammar is that of Docker's distribution/reference
// package (regexp.go and normalize.go, https://github.com/distribution/reference); docs/values.md lists
// where gpuprep is stricter. Pure functions; tested in tests/util/image_ref_test.cc and, against Docker's
// own parser, by the differential tests.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace gp {

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
// registry host, or a text over 1024 bytes. "index.docker.io/x" is "docker.io/library/x". On failure `why`
// (when given) says which part is wrong, quoting it with QuoteToken.
std::optional<ImageRef> ParseImageRef(std::string_view text, std::string* why = nullptr);

// A registry mirror: "HOST[:PORT][/PREFIX]" (trailing '/' ignored), HOST a registry host as in a reference
// (not Docker Hub), PREFIX path components; no tag, no digest.
bool ValidImageMirror(std::string_view mirror);

// What apply pulls and launch runs. Without a mirror: the reference, with `digest` (when given) added or
// checked against the reference's own. With a mirror: PREFIX/PATH on the mirror, pinned by digest (a digest
// is required: the mirror is trusted only to serve the same bytes). Throws gp::Error (exit 2) when the
// digests disagree, a mirror has no digest to pin or is not a mirror, or the result is no reference.
std::string PullReference(const ImageRef& ref, const std::string& digest, const std::string& mirror);

// PullReference for a stack's image.ref/digest/mirror: `ref` as written when neither digest nor mirror is
// set; "" when `ref` is not a reference.
std::string ImagePullReference(const std::string& ref, const std::string& digest, const std::string& mirror);

// A container's working directory as Docker takes it (`docker run -w`): an absolute path; and, stricter,
// one line of valid UTF-8 without control characters.
bool ValidContainerWorkdir(std::string_view dir);

}  // namespace gp
