// An image's manifest and config read from its registry before any pull (the OCI distribution API over
// sys::HttpClient): GET /v2/NAME/manifests/REF with the index, manifest-list and manifest media types
// accepted, the platform's manifest picked from an index, then GET /v2/NAME/blobs/CONFIG. Anonymous
// bearer tokens as Docker Hub and nvcr.io hand them out (401 + WWW-Authenticate: Bearer realm=...,
// service=..., scope=... -> GET realm -> retry once with the token). Every digest is checked against the
// bytes received: a manifest named by digest, the platform manifest an index names, the config blob.
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "docker/image_ref.h"
#include "sys/http.h"

namespace gp::docker {

struct RegistryOptions {
  std::string os = "linux";
  std::string architecture = "amd64";        // the platform an index is narrowed to
  std::chrono::milliseconds timeout{15000};  // each request
};

struct RemoteImage {
  std::string digest;  // what the reference resolves to (an index's own digest: Docker's RepoDigests)
  std::string platform_digest;  // the platform's manifest when `digest` is an index; "" otherwise
  std::string config_digest;
  std::vector<std::string>
      env;  // the config's config.Env ("KEY=VALUE"; lines with control characters dropped)
};

// Reads `ref`'s manifest and config from its registry (https only; docker.io is registry-1.docker.io).
// nullopt with `error` saying why ("nvcr.io/nvidia/pytorch:99.01-py3: MANIFEST_UNKNOWN: manifest unknown").
std::optional<RemoteImage> ReadRemoteImage(sys::HttpClient& http, const ImageRef& ref,
                                           const RegistryOptions& opt, std::string* error);

// The registry's host for an image domain ("docker.io" -> "registry-1.docker.io").
std::string RegistryHost(const std::string& domain);

// One Bearer challenge from a WWW-Authenticate value (RFC 7235 auth-params, quoted strings unescaped).
struct BearerChallenge {
  std::string realm, service, scope;
};
// nullopt when the value holds no Bearer challenge with a realm.
std::optional<BearerChallenge> ParseBearerChallenge(std::string_view header);

// Why `realm` cannot be asked for a token ("" when it can): https, or http to a loopback host only; no
// user information; at most 2048 bytes.
std::string CheckRealm(const std::string& realm);

// "amd64" for "x86_64", "arm64" for "aarch64"; other names unchanged ("" stays "amd64").
std::string PlatformArchitecture(const std::string& uname_machine);

}  // namespace gp::docker
