#include "docker/registry.h"

#include <nlohmann/json.hpp>

#include "docker/engine.h"
#include "sys/sha256.h"
#include "util/input.h"
#include "util/json_locator.h"
#include "util/strings.h"

namespace gp::docker {
namespace {

using nlohmann::json;

constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
constexpr const char* kDockerList = "application/vnd.docker.distribution.manifest.list.v2+json";
constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kDockerManifest = "application/vnd.docker.distribution.manifest.v2+json";
constexpr const char* kOciConfig = "application/vnd.oci.image.config.v1+json";
constexpr const char* kDockerConfig = "application/vnd.docker.container.image.v1+json";

constexpr size_t kMaxManifest = 4u << 20;  // Docker's own limit on a manifest
constexpr size_t kMaxConfig = 16u << 20;
constexpr size_t kMaxTokenAnswer = 1u << 20;
constexpr size_t kMaxToken = 16u << 10;
constexpr int kMaxDepth = 16;

struct Fail {
  std::string message;
};

// j[key] when it is a string, else "" (a registry's JSON is read field by field, never trusted to be typed).
std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string Digest(const std::string& body) { return "sha256:" + sys::Sha256Hex(body); }

// The registry's own words: {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]}.
std::string RegistryWords(const sys::HttpResponse& r) {
  std::string words = "HTTP " + std::to_string(r.status);
  if (r.body.size() > 65536 || JsonTooDeepAt(r.body, kMaxDepth)) return words;
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("errors") && j["errors"].is_array() && !j["errors"].empty() &&
      j["errors"][0].is_object()) {
    const json& e = j["errors"][0];
    std::string code = Str(e, "code"), msg = Str(e, "message");
    std::string text = code.empty() ? msg : msg.empty() ? code : code + ": " + msg;
    if (!text.empty()) words += " " + TerminalSafe(text.substr(0, 200));
  }
  return words;
}

json ParseJson(const std::string& body, const std::string& what) {
  if (JsonTooDeepAt(body, kMaxDepth)) throw Fail{what + ": nested deeper than 16 levels"};
  auto j = json::parse(body, nullptr, false);  // invalid UTF-8 is a parse error too
  if (j.is_discarded() || !j.is_object()) throw Fail{what + ": not a JSON object"};
  return j;
}

struct Descriptor {
  std::string media_type, digest, os, architecture;
  uint64_t size = 0;
  bool attestation = false;
};

Descriptor ReadDescriptor(const json& d, const std::string& what) {
  if (!d.is_object()) throw Fail{what + ": not an object"};
  Descriptor out;
  out.media_type = Str(d, "mediaType");
  out.digest = Str(d, "digest");
  if (!ValidDigest(out.digest))
    throw Fail{what + ": digest \"" + TerminalSafe(out.digest.substr(0, 80)) + "\" is not sha256:<64 hex>"};
  auto s = d.find("size");
  if (s == d.end() || !s->is_number_unsigned()) throw Fail{what + ": no size"};
  out.size = s->get<uint64_t>();
  if (auto p = d.find("platform"); p != d.end() && p->is_object()) {
    out.os = Str(*p, "os");
    out.architecture = Str(*p, "architecture");
  }
  if (auto a = d.find("annotations"); a != d.end() && a->is_object())
    out.attestation = Str(*a, "vnd.docker.reference.type") == "attestation-manifest";
  return out;
}

// One repository's requests, with the anonymous token once the registry asks for one.
class Session {
 public:
  Session(sys::HttpClient& http, const ImageRef& ref, const RegistryOptions& opt)
      : http_(http),
        ref_(ref),
        opt_(opt),
        base_("https://" + RegistryHost(ref.domain) + "/v2/" + ref.path + "/") {}

  // GET base_ + `rel`; a 2xx answer, or Fail with the registry's words.
  sys::HttpResponse Get(const std::string& rel, const std::string& accept, size_t max_body) {
    for (int attempt = 0;; ++attempt) {
      sys::HttpRequest req;
      req.url = base_ + rel;
      req.timeout = opt_.timeout;
      req.max_body = max_body;
      if (!accept.empty()) req.headers.push_back("Accept: " + accept);
      if (!token_.empty()) req.headers.push_back("Authorization: Bearer " + token_);
      sys::HttpResponse r = http_.Send(req);
      if (!r.error.empty()) throw Fail{"GET " + req.url + ": " + TerminalSafe(r.error)};
      if (r.status == 401 && attempt == 0 && token_.empty()) {
        FetchToken(r);
        continue;
      }
      if (r.status == 401)
        throw Fail{"GET " + req.url + ": " + RegistryWords(r) +
                   " even with an anonymous token (a private repository, or one that does not exist)"};
      if (r.status < 200 || r.status >= 300) throw Fail{"GET " + req.url + ": " + RegistryWords(r)};
      return r;
    }
  }

 private:
  void FetchToken(const sys::HttpResponse& challenge_answer) {
    std::optional<BearerChallenge> c;
    std::string schemes;
    for (const auto& [k, v] : challenge_answer.headers) {
      if (k != "www-authenticate") continue;
      if (!c) c = ParseBearerChallenge(v);
      schemes += (schemes.empty() ? "" : ", ") + TerminalSafe(v.substr(0, v.find(' ')));
    }
    const std::string where = RegistryHost(ref_.domain);
    if (!c)
      throw Fail{where + " answers 401 and offers no Bearer token (" +
                 (schemes.empty() ? "no challenge" : schemes) + "); gpuprep reads public images anonymously"};
    if (std::string why = CheckRealm(c->realm); !why.empty()) throw Fail{where + ": " + why};
    std::string url = c->realm + (c->realm.find('?') == std::string::npos ? "?" : "&");
    if (!c->service.empty()) url += "service=" + QueryEscape(c->service) + "&";
    url += "scope=" + QueryEscape("repository:" + ref_.path + ":pull");
    sys::HttpRequest req;
    req.url = url;
    req.timeout = opt_.timeout;
    req.max_body = kMaxTokenAnswer;
    sys::HttpResponse r = http_.Send(req);
    const std::string realm = TerminalSafe(c->realm);
    if (!r.error.empty()) throw Fail{"token from " + realm + ": " + TerminalSafe(r.error)};
    if (r.status != 200)
      throw Fail{"token from " + realm + ": " + RegistryWords(r) + " (anonymous access refused)"};
    json j = ParseJson(r.body, "token from " + realm);
    std::string token = Str(j, "token");
    if (token.empty()) token = Str(j, "access_token");
    if (token.empty()) throw Fail{"token from " + realm + ": no token in the answer"};
    if (token.size() > kMaxToken) throw Fail{"token from " + realm + ": longer than 16 KiB"};
    for (char ch : token)
      if (ch < 0x21 || ch > 0x7e) throw Fail{"token from " + realm + ": not printable ASCII"};
    token_ = token;
  }

  sys::HttpClient& http_;
  const ImageRef& ref_;
  const RegistryOptions& opt_;
  std::string base_;
  std::string token_;
};

// The media type a manifest says it is (its mediaType field, else the Content-Type header).
std::string MediaType(const json& j, const sys::HttpResponse& r) {
  std::string t = Str(j, "mediaType");
  if (!t.empty()) return t;
  const std::string header = r.Header("content-type");
  return std::string(Trim(std::string_view(header).substr(0, header.find(';'))));
}

// The manifest's bytes must be what `digest` names; a Docker-Content-Digest header must agree too.
void CheckManifestDigest(const sys::HttpResponse& r, const std::string& got, const std::string& want,
                         const std::string& what) {
  if (!want.empty() && got != want) throw Fail{what + " is " + got + ", not " + want + " as asked; refused"};
  std::string header = r.Header("docker-content-digest");
  if (StartsWith(header, "sha256:") && header != got)
    throw Fail{what + ": Docker-Content-Digest " + TerminalSafe(header.substr(0, 80)) +
               " but the bytes are " + got + "; refused"};
}

Descriptor PickPlatform(const json& index, const RegistryOptions& opt, const std::string& what) {
  auto m = index.find("manifests");
  if (m == index.end() || !m->is_array()) throw Fail{what + ": an index without manifests"};
  std::vector<std::string> seen;
  for (size_t i = 0; i < m->size() && i < 1024; ++i) {
    Descriptor d = ReadDescriptor((*m)[i], what + ": manifests[" + std::to_string(i) + "]");
    if (d.attestation) continue;
    if (d.os == opt.os && d.architecture == opt.architecture) return d;
    seen.push_back(TerminalSafe((d.os + "/" + d.architecture).substr(0, 64)));
  }
  throw Fail{what + " has no " + opt.os + "/" + opt.architecture +
             " image (it has: " + (seen.empty() ? std::string("none") : Join(seen, ", ")) + ")"};
}

std::vector<std::string> ConfigEnv(const json& config) {
  std::vector<std::string> env;
  auto c = config.find("config");
  if (c == config.end() || !c->is_object()) return env;
  auto e = c->find("Env");
  if (e == c->end() || !e->is_array()) return env;
  for (const auto& v : *e) {
    if (!v.is_string() || env.size() >= 4096) continue;
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() <= 32768 && !ControlCharAt(s)) env.push_back(s);
  }
  return env;
}

RemoteImage Read(sys::HttpClient& http, const ImageRef& ref, const RegistryOptions& opt) {
  Session session(http, ref, opt);
  RemoteImage out;
  const std::string name = ref.str();
  const std::string want = ref.digest;
  const std::string accept =
      std::string(kOciIndex) + ", " + kDockerList + ", " + kOciManifest + ", " + kDockerManifest;
  sys::HttpResponse r = session.Get(
      "manifests/" + (want.empty() ? (ref.tag.empty() ? "latest" : ref.tag) : want), accept, kMaxManifest);
  out.digest = Digest(r.body);
  CheckManifestDigest(r, out.digest, want, "the manifest of " + name);
  json manifest = ParseJson(r.body, "the manifest of " + name);
  std::string type = MediaType(manifest, r);
  if (type == kOciIndex || type == kDockerList) {
    Descriptor d = PickPlatform(manifest, opt, "the index of " + name);
    if (d.size > kMaxManifest)
      throw Fail{"the " + opt.architecture + " manifest of " + name + " is larger than 4 MiB"};
    const std::string what = "the " + opt.os + "/" + opt.architecture + " manifest of " + name;
    r = session.Get("manifests/" + d.digest, std::string(kOciManifest) + ", " + kDockerManifest,
                    kMaxManifest);
    out.platform_digest = Digest(r.body);
    CheckManifestDigest(r, out.platform_digest, d.digest, what);
    if (r.body.size() != d.size)
      throw Fail{what + " is " + std::to_string(r.body.size()) + " bytes, the index says " +
                 std::to_string(d.size) + "; refused"};
    manifest = ParseJson(r.body, what);
    type = MediaType(manifest, r);
  }
  if (type != kOciManifest && type != kDockerManifest)
    throw Fail{"the manifest of " + name + " is \"" + TerminalSafe(type.substr(0, 100)) +
               "\", not an image index or manifest gpuprep reads (schema 2 / OCI)"};
  auto cfg = manifest.find("config");
  if (cfg == manifest.end()) throw Fail{"the manifest of " + name + " has no config"};
  Descriptor c = ReadDescriptor(*cfg, "the manifest of " + name + ": config");
  if (c.media_type != kOciConfig && c.media_type != kDockerConfig)
    throw Fail{"the config of " + name + " is \"" + TerminalSafe(c.media_type.substr(0, 100)) +
               "\", not an image config"};
  if (c.size > kMaxConfig) throw Fail{"the config of " + name + " is larger than 16 MiB"};
  r = session.Get("blobs/" + c.digest, "", kMaxConfig);
  const std::string got = Digest(r.body);
  if (got != c.digest || r.body.size() != c.size)
    throw Fail{"the config blob of " + name + " is " + got + " (" + std::to_string(r.body.size()) +
               " bytes), but the manifest's descriptor says " + c.digest + " (" + std::to_string(c.size) +
               " bytes); refused"};
  out.config_digest = c.digest;
  out.env = ConfigEnv(ParseJson(r.body, "the config of " + name));
  return out;
}

}  // namespace

std::optional<RemoteImage> ReadRemoteImage(sys::HttpClient& http, const ImageRef& ref,
                                           const RegistryOptions& opt, std::string* error) {
  try {
    return Read(http, ref, opt);
  } catch (const Fail& f) {
    if (error) *error = f.message;
  } catch (const std::exception& e) {  // libcrypto could not be loaded
    if (error) *error = ref.str() + ": " + e.what();
  }
  return std::nullopt;
}

}  // namespace gp::docker
