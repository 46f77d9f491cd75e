#include "util/image_ref.h"

#include <algorithm>

#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp {
namespace {

// The grammar of Docker's distribution/reference (regexp.go; https://github.com/distribution/reference),
// written out by hand so that each rule can be tested on its own and each failure named.
constexpr size_t kMaxReferenceBytes = 1024;  // gpuprep's bound on the whole text (Docker has none)
constexpr size_t kMaxPathBytes = 255;        // NameTotalLengthMax, applied to the path alone

bool Alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool AnyAlnum(char c) { return Alnum(c) || (c >= 'A' && c <= 'Z'); }
bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Hex(char c) { return Digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// One path component: [a-z0-9]+ ((\.|_|__|-+) [a-z0-9]+)*.
bool ValidComponent(std::string_view c) {
  size_t i = 0;
  for (;;) {
    const size_t run = i;
    while (i < c.size() && Alnum(c[i])) ++i;
    if (i == run) return false;  // empty, or a separator not followed by [a-z0-9]
    if (i == c.size()) return true;
    if (c[i] == '.') {
      ++i;
    } else if (c[i] == '_') {
      i += (i + 1 < c.size() && c[i + 1] == '_') ? 2 : 1;
    } else if (c[i] == '-') {
      while (i < c.size() && c[i] == '-') ++i;
    } else {
      return false;
    }
  }
}

// One DNS-like label: [a-zA-Z0-9] or [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9].
bool ValidLabel(std::string_view l) {
  if (l.empty() || !AnyAlnum(l.front()) || !AnyAlnum(l.back())) return false;
  for (char c : l)
    if (!AnyAlnum(c) && c != '-') return false;
  return true;
}

// host[:port]: labels joined by '.', or an IPv6 address in brackets (\[[a-fA-F0-9:]+\]); port [0-9]+.
bool ValidDomain(std::string_view d) {
  if (d.empty()) return false;
  std::string_view host = d, port;
  bool has_port = false;
  if (d.front() == '[') {
    const size_t close = d.find(']');
    if (close == std::string_view::npos || close < 2) return false;
    for (char c : d.substr(1, close - 1))
      if (!Hex(c) && c != ':') return false;
    host = {};
    if (close + 1 < d.size()) {
      if (d[close + 1] != ':') return false;
      port = d.substr(close + 2);
      has_port = true;
    }
  } else if (const size_t colon = d.find(':'); colon != std::string_view::npos) {
    host = d.substr(0, colon);
    port = d.substr(colon + 1);
    has_port = true;
  }
  if (has_port && (port.empty() || !std::all_of(port.begin(), port.end(), Digit))) return false;
  if (d.front() == '[') return true;
  for (size_t i = 0;;) {
    const size_t dot = host.find('.', i);
    if (!ValidLabel(host.substr(i, dot == std::string_view::npos ? dot : dot - i))) return false;
    if (dot == std::string_view::npos) return true;
    i = dot + 1;
  }
}

// [\w][\w.-]{0,127}, \w being [A-Za-z0-9_].
bool ValidTag(std::string_view t) {
  if (t.empty() || t.size() > 128 || !(AnyAlnum(t[0]) || t[0] == '_')) return false;
  for (char c : t)
    if (!AnyAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

// 64 lower-case hex digits: what Docker takes for an image id, never a name.
bool LooksLikeImageId(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return Digit(c) || (c >= 'a' && c <= 'f'); });
}

std::optional<ImageRef> Refuse(std::string* why, const std::string& reason) {
  if (why) *why = reason;
  return std::nullopt;
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

std::optional<ImageRef> ParseImageRef(std::string_view text, std::string* why) {
  if (text.empty()) return Refuse(why, "it is empty");
  if (text.size() > kMaxReferenceBytes) return Refuse(why, "it is longer than 1024 bytes");
  if (LooksLikeImageId(text)) return Refuse(why, "64 hex digits alone name an image id, not an image");
  ImageRef r;
  std::string_view rest = text;
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    r.digest = std::string(rest.substr(at + 1));
    if (!ValidDigest(r.digest))
      return Refuse(why,
                    "the digest " + QuoteToken(r.digest) + " is not sha256: and 64 lower-case hex digits");
    rest = rest.substr(0, at);
  }
  // A ':' after the last '/' starts the tag (a ':' before it is a registry port).
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    r.tag = std::string(rest.substr(colon + 1));
    if (!ValidTag(r.tag))
      return Refuse(why, "the tag " + QuoteToken(r.tag) + " is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    rest = rest.substr(0, colon);
  }
  // The first component names a registry when it has a '.' or a ':' or is "localhost" (Docker's
  // splitDockerDomain, normalize.go); index.docker.io is Docker Hub's old name for docker.io. A first
  // component that looks like a registry but is not a valid host is refused, where Docker would keep the
  // whole text as a path on no registry at all.
  size_t first = rest.find('/');
  std::string_view head = rest.substr(0, first);
  if (first != std::string_view::npos &&
      (head.find_first_of(".:") != std::string_view::npos || head == "localhost")) {
    if (!ValidDomain(head)) return Refuse(why, "the registry " + QuoteToken(head) + " is not HOST[:PORT]");
    r.domain = head == "index.docker.io" ? "docker.io" : std::string(head);
    rest = rest.substr(first + 1);
  } else {
    r.domain = "docker.io";
  }
  for (size_t i = 0;;) {
    const size_t next = rest.find('/', i);
    const std::string_view c = rest.substr(i, next == std::string_view::npos ? next : next - i);
    if (!ValidComponent(c))
      return Refuse(why, "the path component " + QuoteToken(c) +
                             " is not lower-case letters and digits joined by '.', '_', '__' or '-'");
    if (next == std::string_view::npos) break;
    i = next + 1;
  }
  r.path = std::string(rest);
  if (r.domain == "docker.io" && r.path.find('/') == std::string::npos) r.path = "library/" + r.path;
  if (r.path.size() > kMaxPathBytes) return Refuse(why, "its path is longer than 255 bytes");
  return r;
}

std::string ImageRef::Familiar() const {
  std::string s = path;
  if (domain != "docker.io")
    s = domain + "/" + path;
  else if (StartsWith(path, "library/") && path.find('/', 8) == std::string::npos)
    s = path.substr(8);
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

bool ValidImageMirror(std::string_view mirror) {
  while (!mirror.empty() && mirror.back() == '/') mirror.remove_suffix(1);
  if (mirror.empty()) return false;
  // Read as the name of an image "x" under it: the same host and component rules as any reference.
  auto parsed = ParseImageRef(std::string(mirror) + "/x");
  return parsed && parsed->domain != "docker.io" && parsed->tag.empty() && parsed->digest.empty();
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
    throw UsageError("image mirror " + QuoteToken(mirror) + ": the stack pins no image.digest for " +
                     ref.str() + "; a mirror is used only for an image pinned by digest");
  if (!ValidImageMirror(mirror))
    throw UsageError("image mirror " + QuoteToken(mirror) + " is not HOST[:PORT][/PREFIX]");
  std::string m = mirror;
  while (!m.empty() && m.back() == '/') m.pop_back();
  std::string why;
  auto parsed = ParseImageRef(m + "/" + ref.path + "@" + pin, &why);
  if (!parsed) throw UsageError("image " + ref.str() + " on mirror " + QuoteToken(mirror) + ": " + why);
  return parsed->str();
}

std::string ImagePullReference(const std::string& ref, const std::string& digest, const std::string& mirror) {
  auto parsed = ParseImageRef(ref);
  if (!parsed) return "";
  if (digest.empty() && mirror.empty()) return ref;
  return PullReference(*parsed, digest, mirror);
}

bool ValidContainerWorkdir(std::string_view dir) {
  return !dir.empty() && dir.front() == '/' && !InvalidUtf8At(dir) && !ControlCharAt(dir);
}

}  // namespace gp
