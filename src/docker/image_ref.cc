#include "docker/image_ref.h"

#include <cctype>

#include "util/error.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::docker {
namespace {

bool Lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One path component: [a-z0-9]+ joined by '.', '_', '__' or runs of '-'.
bool ValidComponent(std::string_view c) {
  if (c.empty() || !Lower(c.front()) || !Lower(c.back())) return false;
  for (size_t i = 0; i < c.size(); ++i) {
    char ch = c[i];
    if (Lower(ch) || ch == '-') continue;
    if (ch == '.' || ch == '_') {
      if (i + 1 < c.size() && !Lower(c[i + 1]) && !(ch == '_' && c[i + 1] == '_')) return false;
      if (ch == '_' && i + 1 < c.size() && c[i + 1] == '_') ++i;
      continue;
    }
    return false;
  }
  return true;
}

bool ValidDomain(std::string_view d) {
  if (d.empty() || d.front() == '-' || d.front() == '.') return false;
  for (char c : d)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':' && c != '[' && c != ']')
      return false;
  return true;
}

bool ValidTag(std::string_view t) {
  if (t.empty() || t.size() > 128) return false;
  if (!(std::isalnum(static_cast<unsigned char>(t[0])) || t[0] == '_')) return false;
  for (char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

}  // namespace

bool ValidDigest(std::string_view d) {
  if (!StartsWith(d, "sha256:") || d.size() != 71) return false;
  for (char c : d.substr(7))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string ImageRef::str() const {
  std::string s = Name();
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

std::optional<ImageRef> ParseImageRef(std::string_view text) {
  if (text.empty() || text.size() > 512) return std::nullopt;
  ImageRef r;
  std::string_view rest = text;
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    r.digest = std::string(rest.substr(at + 1));
    if (!ValidDigest(r.digest)) return std::nullopt;
    rest = rest.substr(0, at);
  }
  // A ':' after the last '/' starts the tag (a ':' before it is a registry port).
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    r.tag = std::string(rest.substr(colon + 1));
    if (!ValidTag(r.tag)) return std::nullopt;
    rest = rest.substr(0, colon);
  }
  size_t first = rest.find('/');
  std::string_view head = rest.substr(0, first);
  if (first != std::string_view::npos &&
      (head.find('.') != std::string_view::npos || head.find(':') != std::string_view::npos || head == "localhost")) {
    if (!ValidDomain(head)) return std::nullopt;
    r.domain = std::string(head);
    rest = rest.substr(first + 1);
  } else {
    r.domain = "docker.io";
  }
  for (const auto& c : Split(rest, '/'))
    if (!ValidComponent(c)) return std::nullopt;
  r.path = std::string(rest);
  if (r.domain == "docker.io" && r.path.find('/') == std::string::npos) r.path = "library/" + r.path;
  if (r.Name().size() > 255) return std::nullopt;
  return r;
}

std::string PullReference(const ImageRef& ref, const std::string& digest, const std::string& mirror) {
  if (!digest.empty() && !ref.digest.empty() && digest != ref.digest)
    throw UsageError("image " + ref.str() + " names digest " + ref.digest + " but the stack pins " + digest);
  const std::string pin = digest.empty() ? ref.digest : digest;
  if (mirror.empty()) {
    ImageRef out = ref;
    out.digest = pin;
    return out.str();
  }
  if (pin.empty())
    throw UsageError("image mirror " + mirror + ": the stack pins no image.digest for " + ref.str() +
                     "; a mirror is used only for an image pinned by digest");
  std::string m = mirror;
  while (!m.empty() && m.back() == '/') m.pop_back();
  auto parsed = ParseImageRef(m + "/" + ref.path + "@" + pin);
  if (!parsed || parsed->domain == "docker.io")
    throw UsageError("image mirror \"" + mirror + "\" is not HOST[:PORT][/PREFIX]");
  return parsed->str();
}

std::string ImagePullReference(const std::string& ref, const std::string& digest, const std::string& mirror) {
  auto parsed = ParseImageRef(ref);
  if (!parsed) return "";
  if (digest.empty() && mirror.empty()) return ref;
  return PullReference(*parsed, digest, mirror);
}

std::optional<std::string> NormalizeCudaVersion(std::string_view raw) {
  const std::string text(Trim(raw));
  if (!Version::Parse(text)) return std::nullopt;
  auto parts = Split(text, '.');
  if (parts.size() > 3) parts.resize(3);  // NGC's fourth part is a build number
  return Join(parts, ".");
}

ImageCudaEnv CudaFromEnv(const std::vector<std::string>& env) {
  ImageCudaEnv r;
  for (const auto& kv : env) {
    if (StartsWith(kv, "CUDA_VERSION=")) {
      r.cuda = NormalizeCudaVersion(kv.substr(13)).value_or("");
      r.cuda_raw = r.cuda.empty() ? "" : std::string(Trim(kv.substr(13)));
    } else if (StartsWith(kv, "CUDA_DRIVER_VERSION=")) {
      r.driver = Version::Parse(kv.substr(20)) ? kv.substr(20) : "";
    } else if (StartsWith(kv, "NVIDIA_REQUIRE_CUDA=")) {
      r.require = kv.substr(20);
      bool printable = r.require.size() <= 512;
      for (char c : r.require) printable = printable && c >= 0x20 && c < 0x7f;
      if (!printable) r.require.clear();
    }
  }
  return r;
}

}  // namespace gp::docker
