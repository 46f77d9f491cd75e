#include "manifest/redist_spec.h"

#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

bool AllOf(const std::string& s, const char* allowed) {
  return s.find_first_not_of(allowed) == std::string::npos;
}

constexpr const char* kPathChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/";
constexpr const char* kUrlChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/:[]~%";

bool LoopbackHost(const std::string& hostport) {
  if (StartsWith(hostport, "[::1]")) return true;
  const std::string host = hostport.substr(0, hostport.find(':'));
  return host == "localhost" || (StartsWith(host, "127.") && AllOf(host, "0123456789."));
}

// Returns "" or why `base` is refused; sets `plain_http`.
std::string CheckBase(const std::string& base, bool& plain_http) {
  plain_http = false;
  if (StartsWith(base, "/")) {
    if (!AllOf(base, kPathChars)) return "the directory may only hold letters, digits and ._+-/";
    for (const auto& p : Split(base, '/'))
      if (p == "..") return "the directory must not climb with \"..\"";
    return "";
  }
  std::string rest;
  if (StartsWith(base, "https://")) {
    rest = base.substr(8);
  } else if (StartsWith(base, "http://")) {
    rest = base.substr(7);
    plain_http = true;
  } else {
    return "base must be an https:// URL or an absolute directory";
  }
  const std::string authority = rest.substr(0, rest.find('/'));
  if (authority.find('@') != std::string::npos) return "the URL must not carry user info";
  if (!AllOf(rest, kUrlChars)) return "the URL holds characters other than letters, digits and ._+-/:[]~%";
  if (authority.empty()) return "the URL has no host";
  if (plain_http && !LoopbackHost(authority)) return "plain http is only allowed from a loopback address";
  return CheckUrl(base, UrlRule::kFetch);  // and as libcurl reads it: the host, the port, no %-escapes there
}

}  // namespace

std::string NvidiaRedistBase(const std::string& layer) {
  return "https://developer.download.nvidia.com/compute/" + layer + "/redist/";
}

void ParseSource(Fields& f, const std::string& name, bool redist_allowed, ComponentSpec& c) {
  if (const Node* s = f.Get("source")) {
    c.source = AsString(*s);
    if (c.source != "apt" && c.source != "redist")
      Fail(s->mark, "unknown source " + QuoteToken(c.source) + " (expected one of: apt, redist)");
    if (c.source == "redist" && !redist_allowed)
      Fail(s->mark, name + " has no NVIDIA redistrib JSON: source must be apt");
  }
  const Node* r = f.Get("redist");
  if (c.source != "redist") {
    if (r) Fail(f.node().KeyMark("redist"), "redist: is only read with source: redist");
    return;
  }
  if (!r) Fail(f.node().KeyMark("source"), "source: redist needs a redist: section (release, base)");
  if (c.enabled && !c.version.known())
    Fail(f.node().KeyMark("source"),
         "source: redist needs a pinned version (the archive is checked against it)");
  Fields rf(*r, name + ".redist", nullptr);
  rf.Only({"release", "components", "base", "json_sha256"});
  const Node& rel = rf.Require("release");
  c.redist.release = AsString(rel);
  if (c.redist.release.empty() || !AllOf(c.redist.release, "0123456789.") ||
      c.redist.release.front() == '.' || c.redist.release.find("..") != std::string::npos)
    Fail(rel.mark, "release must be a dotted version such as 9.12.0 (the redistrib_<release>.json name)");
  if (const Node* comps = rf.Get("components")) {
    c.redist.components = AsStringList(*comps);
    for (size_t i = 0; i < c.redist.components.size(); ++i) {
      const auto& comp = c.redist.components[i];
      if (comp.empty() || !AllOf(comp, "abcdefghijklmnopqrstuvwxyz0123456789_"))
        Fail(comps->items[i].mark,
             "component " + QuoteToken(comp) + " must be a redistrib key such as cuda_cudart");
    }
    if (c.redist.components.empty()) Fail(comps->mark, "components: the list is empty");
  } else if (name == "cudnn") {
    c.redist.components = {"cudnn"};
  } else {
    Fail(r->mark, name + ".redist: missing required key \"components\"");
  }
  bool plain_http = false;
  if (const Node* b = rf.Get("base")) {
    c.redist.base = AsString(*b);
    if (std::string why = CheckBase(c.redist.base, plain_http); !why.empty()) Fail(b->mark, why);
  } else {
    c.redist.base = NvidiaRedistBase(name);
  }
  if (auto sha = rf.String("json_sha256")) {
    if (sha->size() != 64 || !AllOf(*sha, "0123456789abcdef"))
      Fail(r->Find("json_sha256")->mark, "json_sha256 must be 64 lower-case hex digits");
    c.redist.json_sha256 = *sha;
  }
  if (plain_http && c.redist.json_sha256.empty())
    Fail(r->Find("base")->mark, "plain http needs json_sha256 pinning the redistrib JSON");
}

}  // namespace gp::manifest
