// gpuprep's answers for the differential suites (tests/integration/differential_*.sh), in the shape the
// reference programs give theirs. Input, one case a line: KIND HEX [HEX...], each HEX an input's bytes:
//   ref HEX       -> ParseImageRef: normalised, domain, path, tag, digest, familiar
//   size HEX      -> ParseBytes: bytes
//   dpkg HEX HEX  -> DebVersion::Problem of each, CompareDebVersions's sign
//   url HEX       -> ParseUrl (scheme, host, port, path, loopback) and, beside it, libcurl's curl_url reading
//   shell HEX...  -> ShellJoin of the argv (hex)
// Output: one JSON object a line, in the input's order, with "kind" and "in" (the HEX fields, space-joined).
// Exit 77 for a url case when libcurl's URL API cannot be loaded (the suite is then skipped), 2 on bad input.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "docker/image_ref.h"
#include "sys/curl_url.h"
#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace {

using nlohmann::json;

int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool Unhex(const std::string& h, std::string& out) {
  if (h.size() % 2) return false;
  out.clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    const int a = Nibble(h[i]), b = Nibble(h[i + 1]);
    if (a < 0 || b < 0) return false;
    out += static_cast<char>(a * 16 + b);
  }
  return true;
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

void Ref(const std::string& in, json& a) {
  auto r = gp::docker::ParseImageRef(in);
  a["ok"] = r.has_value();
  if (!r) return;
  a["normalised"] = r->str();
  a["domain"] = r->domain;
  a["path"] = r->path;
  a["tag"] = r->tag;
  a["digest"] = r->digest;
  a["familiar"] = r->Familiar();
}

void Size(const std::string& in, json& a) {
  auto b = gp::ParseBytes(in);
  a["ok"] = b.has_value();
  if (b) a["bytes"] = *b;
}

void Dpkg(const std::string& x, const std::string& y, json& a) {
  a["problem"] = {gp::DebVersion::Problem(x), gp::DebVersion::Problem(y)};
  const int c = gp::CompareDebVersions(x, y);
  a["order"] = c < 0 ? "lt" : c > 0 ? "gt" : "eq";
}

bool Url(const std::string& in, json& a) {
  std::string why;
  auto u = gp::ParseUrl(in, &why);
  a["ok"] = u.has_value();
  if (u) {
    a["scheme"] = u->scheme;
    a["host"] = u->host;
    a["port"] = u->port;
    a["path"] = u->path;
    a["loopback"] = gp::IsLoopbackHost(u->host);
  } else {
    a["why"] = why;
  }
  auto c = gp::sys::CurlReadUrl(in);
  if (!c) return false;
  a["curl"] = c->ok ? json{{"ok", true},      {"scheme", c->scheme}, {"host", c->host},
                           {"port", c->port}, {"path", c->path},     {"query", c->query}}
                    : json{{"ok", false}, {"error", c->error}};
  return true;
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    const std::vector<std::string> fields = gp::Split(line, ' ');
    std::vector<std::string> raw(fields.size() - 1);
    for (size_t i = 1; i < fields.size(); ++i)
      if (!Unhex(fields[i], raw[i - 1])) {
        std::cerr << "answers: bad line: " << line << "\n";
        return 2;
      }
    const std::string& kind = fields[0];
    json a = {{"kind", kind}, {"in", line.substr(kind.size() + (fields.size() > 1 ? 1 : 0))}};
    if (kind == "ref" && raw.size() == 1) {
      Ref(raw[0], a);
    } else if (kind == "size" && raw.size() == 1) {
      Size(raw[0], a);
    } else if (kind == "dpkg" && raw.size() == 2) {
      Dpkg(raw[0], raw[1], a);
    } else if (kind == "url" && raw.size() == 1) {
      if (!Url(raw[0], a)) {
        std::cerr << "answers: libcurl's URL API (libcurl.so.4, curl_url) cannot be loaded\n";
        return 77;
      }
    } else if (kind == "shell") {
      a["joined"] = Hex(gp::sys::ShellJoin(raw));
    } else {
      std::cerr << "answers: unknown case: " << line << "\n";
      return 2;
    }
    std::cout << a.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  }
  return 0;
}
