// The registry's side of the HTTP exchange: Bearer challenges (RFC 7235 auth-params) and the realms that
// may be asked for a token. The request loop itself is in registry.cc.
#include <cctype>

#include "docker/registry.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::docker {
namespace {

bool TokenChar(char c) {  // RFC 7230 tchar
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Reads auth-params `name=value` (value a token or a quoted-string) separated by commas, from `s` at `i`.
// Stops at the end or at the next challenge's scheme (a token followed by a blank, not by '=').
std::vector<std::pair<std::string, std::string>> AuthParams(std::string_view s, size_t& i) {
  std::vector<std::pair<std::string, std::string>> out;
  auto blanks = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
  };
  for (;;) {
    blanks();
    size_t start = i;
    while (i < s.size() && TokenChar(s[i])) ++i;
    if (i == start) return out;
    std::string name = ToLower(s.substr(start, i - start));
    size_t j = i;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j >= s.size() || s[j] != '=') {  // a new challenge's scheme
      i = start;
      return out;
    }
    i = j + 1;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::string value;
    if (i < s.size() && s[i] == '"') {
      ++i;
      bool closed = false;
      while (i < s.size()) {
        char c = s[i++];
        if (c == '\\' && i < s.size()) {
          value += s[i++];
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          value += c;
        }
      }
      if (!closed) return {};  // an unterminated quoted string: nothing in it is trusted
    } else {
      size_t v = i;
      while (i < s.size() && TokenChar(s[i])) ++i;
      value = std::string(s.substr(v, i - v));
    }
    out.emplace_back(std::move(name), std::move(value));
  }
}

}  // namespace

std::optional<BearerChallenge> ParseBearerChallenge(std::string_view header) {
  if (header.size() > 8192 || ControlCharAt(header)) return std::nullopt;
  size_t i = 0;
  while (i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == '\t' || header[i] == ',')) ++i;
    size_t start = i;
    while (i < header.size() && TokenChar(header[i])) ++i;
    if (i == start) return std::nullopt;
    const std::string scheme = ToLower(header.substr(start, i - start));
    auto params = AuthParams(header, i);
    if (scheme != "bearer") continue;
    BearerChallenge c;
    for (const auto& [k, v] : params) {
      if (k == "realm")
        c.realm = v;
      else if (k == "service")
        c.service = v;
      else if (k == "scope")
        c.scope = v;
    }
    if (!c.realm.empty()) return c;
  }
  return std::nullopt;
}

std::string CheckRealm(const std::string& realm) {
  if (realm.size() > 2048) return "the token realm is longer than 2048 bytes";
  std::string why;
  auto url = ParseUrl(realm, &why);
  if (!url) return "the token realm \"" + TerminalSafe(realm) + "\" is not a URL: " + why;
  if (url->scheme == "https") return "";
  if (url->scheme == "http" && IsLoopbackHost(url->host)) return "";
  return "the token realm \"" + TerminalSafe(realm) +
         "\" is not https (plain http only on a loopback address)";
}

std::string PlatformArchitecture(const std::string& uname_machine) {
  if (uname_machine == "x86_64" || uname_machine.empty()) return "amd64";
  if (uname_machine == "aarch64") return "arm64";
  return uname_machine;
}

std::string RegistryHost(const std::string& domain) {
  if (domain == "docker.io" || domain == "index.docker.io") return "registry-1.docker.io";
  return domain;
}

}  // namespace gp::docker
