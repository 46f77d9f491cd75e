#include "util/input.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace gp {
namespace {

// Length of the well-formed UTF-8 sequence at `i` (1..4), or 0 when the byte there starts none
// (Unicode 15, Table 3-7).
size_t SequenceAt(std::string_view s, size_t i, uint32_t* cp = nullptr) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) {
    if (cp) *cp = c;
    return 1;
  }
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  uint32_t v = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    v = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    v = c & 0x0Fu;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    v = c & 0x07u;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char t = b(i + k);
    if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF)) return 0;
    v = (v << 6) | (t & 0x3Fu);
  }
  if (cp) *cp = v;
  return len;
}

bool IsControl(uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F); }

bool IsBidiControl(uint32_t cp) { return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069); }

bool PathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '+' || c == '~' || c == '-' || c == '/';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// inet_pton(AF_INET) as glibc reads it: four decimal numbers 0-255 joined by '.', no leading zeros.
bool DottedQuad(std::string_view s) {
  int octets = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    const size_t j = std::min(s.find('.', i), s.size());
    const std::string_view part = s.substr(i, j - i);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0') || ++octets > 4) return false;
    int v = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    if (v > 255) return false;
    i = j;
  }
  return octets == 4;
}

// Whether libcurl's URL parser reads `host` as a numeric IPv4 address (urlapi.c ipv4_normalize): one to
// four parts joined by '.', each a C number (decimal, 0x hex or 0 octal) that fits its place.
bool CurlReadsAsIpv4(std::string_view host) {
  std::vector<uint64_t> parts;
  size_t i = 0;
  for (;;) {
    if (i >= host.size() || host[i] < '0' || host[i] > '9' || parts.size() == 4) return false;
    int base = 10;
    if (host[i] == '0' && i + 2 < host.size() && (host[i + 1] | 0x20) == 'x' &&
        std::isxdigit(static_cast<unsigned char>(host[i + 2]))) {
      base = 16;
      i += 2;
    } else if (host[i] == '0') {
      base = 8;
    }
    uint64_t v = 0;
    for (; i < host.size(); ++i) {
      const char c = static_cast<char>(host[i] | 0x20);
      const int d = (c >= '0' && c <= '9')                 ? c - '0'
                    : (base == 16 && c >= 'a' && c <= 'f') ? c - 'a' + 10
                                                           : 99;
      if (d >= base) break;
      v = std::min<uint64_t>(v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d), 1ULL << 40);
    }
    if (v > 0xFFFFFFFFULL) return false;
    parts.push_back(v);
    if (i == host.size()) break;
    if (host[i] != '.') return false;
    ++i;
  }
  // a (32 bits), a.b (8.24), a.b.c (8.8.16), a.b.c.d (8.8.8.8)
  const uint64_t last_max = parts.size() == 1   ? 0xFFFFFFFFULL
                            : parts.size() == 2 ? 0xFFFFFFULL
                            : parts.size() == 3 ? 0xFFFFULL
                                                : 0xFFULL;
  for (size_t k = 0; k + 1 < parts.size(); ++k)
    if (parts[k] > 0xFF) return false;
  return parts.back() <= last_max;
}

}  // namespace

std::optional<size_t> InvalidUtf8At(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string ReplaceInvalidUtf8(std::string_view s, size_t* replaced) {
  std::string out;
  out.reserve(s.size());
  size_t count = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceAt(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++count;
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (replaced) *replaced = count;
  return out;
}

std::optional<size_t> ControlCharAt(std::string_view s, bool allow_text) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = SequenceAt(s, i, &cp);
    if (n == 0) {
      n = 1;  // not UTF-8: not a control character either (InvalidUtf8At reports it)
    } else if (IsControl(cp) && !(allow_text && (cp == '\n' || cp == '\t'))) {
      return i;
    }
    i += n;
  }
  return std::nullopt;
}

std::optional<size_t> BidiControlAt(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = SequenceAt(s, i, &cp);
    if (n != 0 && IsBidiControl(cp)) return i;
    i += n == 0 ? 1 : n;
  }
  return std::nullopt;
}

std::string TerminalSafe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  char hex[8];
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t n = SequenceAt(s, i, &cp);
    if (n == 0 || IsControl(cp) || IsBidiControl(cp)) {
      switch (n == 0 ? 0x100 : cp) {
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        case 0x1B:
          out += "\\e";
          break;
        default:
          for (size_t k = 0; k < (n == 0 ? 1 : n); ++k) {
            std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(s[i + k]));
            out += hex;
          }
      }
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string PrometheusLabelValue(std::string_view s) {
  std::string out;
  for (char c : TerminalSafe(s)) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

bool ValidName(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '+' && c != '~' && c != '-'))) return false;
  }
  return true;
}

bool ValidDebName(std::string_view s) {
  if (s.size() < 2 || s.size() > 128) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '+' && c != '.' && c != '-'))) return false;
  }
  return true;
}

bool ValidDebVersion(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::string_view rest = s;
  if (const size_t colon = s.find(':'); colon != std::string_view::npos) {  // epoch: digits only
    if (colon == 0) return false;
    for (char c : s.substr(0, colon))
      if (c < '0' || c > '9') return false;
    rest = s.substr(colon + 1);
  }
  std::string_view upstream = rest, revision;
  if (const size_t dash = rest.rfind('-'); dash != std::string_view::npos) {
    upstream = rest.substr(0, dash);
    revision = rest.substr(dash + 1);
    if (revision.empty()) return false;
  }
  if (upstream.empty() || upstream[0] < '0' || upstream[0] > '9') return false;
  for (char c : upstream)
    if (!alnum(c) && c != '.' && c != '+' && c != '~' && c != '-') return false;
  for (char c : revision)
    if (!alnum(c) && c != '.' && c != '+' && c != '~') return false;
  return true;
}

bool ValidPackageWord(std::string_view s) {
  const size_t eq = s.find('=');
  if (eq == std::string_view::npos) return ValidDebName(s);
  return ValidDebName(s.substr(0, eq)) && ValidDebVersion(s.substr(eq + 1));
}

bool ValidIpv6(std::string_view s) {
  if (s.empty() || (s[0] == ':' && (s.size() < 2 || s[1] != ':'))) return false;
  size_t i = s[0] == ':' ? 1 : 0;
  size_t token = i;  // where the current group starts (an IPv4 tail is read from there)
  int words = 0, digits = 0;
  bool compressed = false;
  while (i < s.size()) {
    const char c = s[i++];
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      if (++digits > 4) return false;
    } else if (c == ':') {
      token = i;
      if (digits == 0) {
        if (compressed) return false;
        compressed = true;
      } else {
        if (i == s.size() || ++words > 8) return false;
        digits = 0;
      }
    } else if (c == '.' && words + 2 <= 8 && DottedQuad(s.substr(token))) {
      words += 2;
      digits = 0;
      break;
    } else {
      return false;
    }
  }
  if (digits > 0 && ++words > 8) return false;
  return compressed ? words < 8 : words == 8;
}

namespace {

// ParseUrl's steps: each returns why the part it checks is refused, nullptr when it is fine.

// The URL's length and characters.
const char* UrlCharsProblem(std::string_view s) {
  if (s.size() > 2048) return "longer than 2048 characters";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F) return "spaces, control and non-ASCII characters are not allowed";
    if (c == '\\' || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' || c == '}' || c == '|' ||
        c == '^')
      return "characters \\ \" < > ` { } | ^ are not allowed";
  }
  return nullptr;
}

// The scheme (lower-case, not empty): a letter, then letters, digits, '+', '-' and '.'.
const char* UrlSchemeProblem(const std::string& scheme) {
  for (char c : scheme)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
      return "the scheme is not a URL scheme";
  if (!(scheme[0] >= 'a' && scheme[0] <= 'z')) return "the scheme is not a URL scheme";
  return nullptr;
}

// Splits the authority into `host` ("[...]" for IPv6) and `port` (`port_sep` when a ':' introduced one),
// checking the host's spelling.
const char* SplitUrlAuthority(std::string_view authority, std::string_view& host, std::string_view& port,
                              bool& port_sep) {
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return "an IPv6 address lacks its ']'";
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return "unexpected text after the IPv6 address";
      port = after.substr(1);
      port_sep = true;
    }
    if (!ValidIpv6(host.substr(1, host.size() - 2))) return "not an IPv6 address between the brackets";
  } else {
    const size_t pc = authority.find(':');
    if (pc != std::string_view::npos) {
      host = authority.substr(0, pc);
      port = authority.substr(pc + 1);
      port_sep = true;
    }
    for (char c : host)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
            c == '-'))
        return "a host name holds letters, digits, '.' and '-' only";
    // libcurl reads 127.1, 0x7f.0.0.1 and 010.0.0.1 as addresses (the last one as 8.0.0.1): one spelling
    // only.
    if (CurlReadsAsIpv4(host) && !DottedQuad(host))
      return "an IPv4 address is written as four decimal numbers 0-255 without leading zeros";
  }
  return nullptr;
}

// A port given after ':': a number from 1 to 65535.
const char* UrlPortProblem(std::string_view port) {
  if (port.size() > 5) return "the port is not a number from 1 to 65535";
  unsigned long n = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return "the port is not a number from 1 to 65535";
    n = n * 10 + static_cast<unsigned long>(c - '0');
  }
  if (n == 0 || n > 65535) return "the port is not a number from 1 to 65535";
  return nullptr;
}

}  // namespace

std::optional<Url> ParseUrl(std::string_view s, std::string* why) {
  const auto fail = [why](const char* reason) -> std::optional<Url> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (const char* problem = UrlCharsProblem(s)) return fail(problem);
  const size_t colon = s.find("://");
  if (colon == std::string_view::npos || colon == 0) return fail("expected scheme://host/path");
  Url u;
  u.scheme = Lower(s.substr(0, colon));
  if (const char* problem = UrlSchemeProblem(u.scheme)) return fail(problem);
  std::string_view rest = s.substr(colon + 3);
  const size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (!tail.empty() && tail[0] != '/') return fail("a query or fragment must follow a path");
  if (tail.find('#') != std::string_view::npos) return fail("a fragment (#) is not allowed");
  if (authority.find('@') != std::string_view::npos) return fail("user information (user@) is not allowed");
  if (authority.find('%') != std::string_view::npos) return fail("a percent-encoded host is not allowed");
  std::string_view host = authority, port;
  bool port_sep = false;
  if (const char* problem = SplitUrlAuthority(authority, host, port, port_sep)) return fail(problem);
  if (port_sep)
    if (const char* problem = UrlPortProblem(port)) return fail(problem);
  u.host = Lower(host);
  u.port = std::string(port);
  u.path = std::string(tail);
  if (u.scheme == "file") {
    if (!u.host.empty() || !u.port.empty()) return fail("a file URL names no host (file:///path)");
    if (u.path.empty()) return fail("a file URL needs a path");
  } else if (u.host.empty()) {
    return fail("the host is missing");
  }
  return u;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "[::1]") return true;
  // 127.a.b.c: exactly four decimal octets 0..255, the first 127.
  int octets = 0;
  size_t i = 0;
  while (i <= host.size()) {
    size_t j = host.find('.', i);
    if (j == std::string::npos) j = host.size();
    const std::string part = host.substr(i, j - i);
    if (part.empty() || part.size() > 3) return false;
    int v = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    if (v > 255 || (octets == 0 && v != 127)) return false;
    ++octets;
    i = j + 1;
  }
  return octets == 4;
}

std::string CheckUrl(std::string_view s, UrlRule rule) {
  std::string why;
  auto u = ParseUrl(s, &why);
  if (!u) return "not a usable URL: " + why;
  if (u->scheme == "https") return "";
  if (u->scheme == "http") {
    if (rule == UrlRule::kApt || IsLoopbackHost(u->host)) return "";
    return "plain http is accepted only for loopback addresses: use https://";
  }
  if (u->scheme == "file" && rule == UrlRule::kApt) return "";
  return rule == UrlRule::kApt ? "a repository URL must be https://, http:// or file:///"
                               : "expected an https:// URL (plain http only for loopback addresses)";
}

namespace {

// The rules an absolute and a relative path share; `path` starts with '/' (a relative one is given a '/').
std::string CheckPathParts(std::string_view path) {
  for (char c : path)
    if (!PathChar(c)) return "a path here holds letters, digits and . _ + ~ - / only";
  if (path.back() == '/') return "must name a file, not a directory";
  for (size_t i = 0; i < path.size();) {
    size_t j = path.find('/', i + 1);
    if (j == std::string_view::npos) j = path.size();
    const std::string_view part = path.substr(i + 1, j - i - 1);
    if (part.empty() || part == "." || part == "..") return "must be normalised (no //, . or .. components)";
    i = j;
  }
  return "";
}

}  // namespace

std::string CheckConfinedPath(std::string_view path, const std::vector<std::string>& dirs) {
  if (path.empty() || path[0] != '/') return "must be an absolute path";
  if (path.size() > 255) return "longer than 255 characters";
  if (std::string why = CheckPathParts(path); !why.empty()) return why;
  for (const auto& d : dirs)
    if (path.size() > d.size() && path.compare(0, d.size(), d) == 0 &&
        path.find('/', d.size()) == std::string_view::npos)
      return "";
  std::string list;
  for (const auto& d : dirs) list += (list.empty() ? "" : " or ") + d;
  return "must be a file directly in " + list;
}

std::string CheckRelativePath(std::string_view path) {
  if (path.empty()) return "must not be empty";
  if (path[0] == '/') return "must be relative to the file that names it";
  if (path.size() > 255) return "longer than 255 characters";
  return CheckPathParts("/" + std::string(path));
}

std::string QuoteToken(std::string_view token) {
  if (token.size() <= kMaxQuotedBytes) return "\"" + TerminalSafe(token) + "\"";
  size_t cut = kMaxQuotedBytes;
  // Back to the first byte of the character the cut would split (a UTF-8 character has at most three
  // continuation bytes).
  for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xC0) == 0x80; ++i) --cut;
  return "\"" + TerminalSafe(token.substr(0, cut)) + "\"...";
}

}  // namespace gp
