// What servers and file shares send: NVIDIA's redistrib JSON (redist/redistrib.h), a registry's
// WWW-Authenticate challenge (docker/registry.h) and image references from a stack or the command line
// (docker/image_ref.h). Properties, not just "no crash":
//  - FindArchive returns an archive whose relative_path is relative, has no "." or ".." component, only
//    [A-Za-z0-9._+-/] and ends in .tar.xz, whose sha256 is 64 lower-case hex digits and whose top_dir is the
//    file name without .tar.xz; anything else is a RedistError (no other exception);
//  - a parsed Bearer challenge has a realm;
//  - a parsed image reference prints (str()) as a reference that parses back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "docker/image_ref.h"
#include "docker/registry.h"
#include "redist/error.h"
#include "redist/redistrib.h"

namespace {

bool Hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void CheckArchive(const gp::redist::RedistArchive& a) {
  const std::string& p = a.relative_path;
  if (p.empty() || p[0] == '/' || p.size() < 8 || p.compare(p.size() - 7, 7, ".tar.xz") != 0) std::abort();
  for (char c : p)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          std::string_view("._+-/").find(c) != std::string_view::npos))
      std::abort();
  for (size_t i = 0; i <= p.size();) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    const std::string part = p.substr(i, j - i);
    if (part.empty() || part == "." || part == "..") std::abort();
    i = j + 1;
  }
  if (!Hex64(a.sha256)) std::abort();
  const std::string file = p.substr(p.rfind('/') + 1);
  if (a.top_dir != file.substr(0, file.size() - 7)) std::abort();
}

void Redist(const std::string& json, const std::string& component, const std::string& platform,
            std::optional<int> cuda_major) {
  try {
    CheckArchive(gp::redist::FindArchive(json, component, platform, cuda_major));
  } catch (const gp::redist::RedistError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  Redist(in, "cudnn", "linux-x86_64", 12);
  Redist(in, "cudnn", "linux-sbsa", 13);
  Redist(in, "cuda_cudart", "linux-x86_64", std::nullopt);

  if (auto c = gp::docker::ParseBearerChallenge(in)) {
    if (c->realm.empty()) std::abort();
    (void)gp::docker::CheckRealm(c->realm);
  }

  if (auto ref = gp::docker::ParseImageRef(in)) {
    const std::string text = ref->str();
    auto again = gp::docker::ParseImageRef(text);
    if (!again || again->str() != text || again->domain != ref->domain || again->path != ref->path ||
        again->tag != ref->tag || again->digest != ref->digest)
      std::abort();
    if (!ref->digest.empty() && !gp::docker::ValidDigest(ref->digest)) std::abort();
    auto familiar = gp::docker::ParseImageRef(ref->Familiar());  // Docker's short form means the same image
    if (!familiar || familiar->str() != text) std::abort();
  }
  (void)gp::docker::NormalizeCudaVersion(in);
  return 0;
}
