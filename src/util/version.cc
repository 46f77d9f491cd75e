#include "util/version.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "util/strings.h"

namespace gp {

std::optional<Version> Version::Parse(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Version v;
  for (const std::string& part : Split(text, '.')) {
    auto n = ParseUnsigned(part);
    if (!n || part.size() > 12) return std::nullopt;
    v.parts_.push_back(*n);
  }
  if (v.parts_.size() > 6) return std::nullopt;
  v.text_ = std::string(text);
  return v;
}

Version Version::Must(std::string_view text) {
  auto v = Parse(text);
  if (!v) throw std::invalid_argument("not a version: \"" + std::string(text) + "\"");
  return *v;
}

Version Version::Prefix(size_t n) const {
  Version v;
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    uint64_t p = i < parts_.size() ? parts_[i] : 0;
    v.parts_.push_back(p);
    if (i) text += '.';
    text += std::to_string(p);
  }
  v.text_ = text;
  return v;
}

int Compare(const Version& a, const Version& b) {
  size_t n = std::max(a.parts_.size(), b.parts_.size());
  for (size_t i = 0; i < n; ++i) {
    uint64_t x = i < a.parts_.size() ? a.parts_[i] : 0;
    uint64_t y = i < b.parts_.size() ? b.parts_[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// ---- dpkg ordering (lib/dpkg/version.c semantics) ----
namespace {

int Order(char c) {
  if (std::isdigit(static_cast<unsigned char>(c))) return 0;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  if (c == '~') return -1;
  if (c) return c + 256;
  return 0;
}

int VerRevCmp(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int first_diff = 0;
    while ((i < a.size() && !std::isdigit(static_cast<unsigned char>(a[i]))) ||
           (j < b.size() && !std::isdigit(static_cast<unsigned char>(b[j])))) {
      int ac = i < a.size() ? Order(a[i]) : 0;
      int bc = j < b.size() ? Order(b[j]) : 0;
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) && j < b.size() &&
           std::isdigit(static_cast<unsigned char>(b[j]))) {
      if (!first_diff) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) return 1;
    if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

}  // namespace

namespace {

bool Blank(char c) { return c == ' ' || c == '\t'; }
bool Space(char c) { return Blank(c) || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// dpkg's parseversion (lib/dpkg/parsehelp.c): fills `v` and returns the error dpkg refuses the text with, or
// nullptr when dpkg reads it (perhaps with a warning: an upstream not starting with a digit, odd characters).
// The epoch is read like strtol: leading white space and a sign are taken, so "+1:1.0" has epoch 1.
const char* ParseLikeDpkg(std::string_view text, DebVersion& v) {
  text = text.substr(0, text.find('\0'));  // dpkg reads C strings
  size_t b = 0;
  while (b < text.size() && Blank(text[b])) ++b;
  if (b == text.size()) return "version string is empty";
  size_t e = b;
  while (e < text.size() && !Blank(text[e])) ++e;
  for (size_t i = e; i < text.size(); ++i)
    if (!Blank(text[i])) return "version string has embedded spaces";
  std::string_view t = text.substr(b, e - b);
  const char* error = nullptr;
  if (const size_t colon = t.find(':'); colon != std::string_view::npos) {
    size_t i = 0;
    while (i < colon && Space(t[i])) ++i;
    const bool negative = i < colon && t[i] == '-';
    if (i < colon && (t[i] == '+' || t[i] == '-')) ++i;
    const size_t digits = i;
    uint64_t epoch = 0;
    for (; i < colon && t[i] >= '0' && t[i] <= '9'; ++i)
      epoch = std::min<uint64_t>(epoch * 10 + static_cast<uint64_t>(t[i] - '0'), 1ULL << 40);
    if (i == digits)
      error = "epoch in version is empty";
    else if (i != colon)
      error = "epoch in version is not number";
    else if (negative && epoch > 0)
      error = "epoch in version is negative";
    else if (epoch > 2147483647)
      error = "epoch in version is too big";
    v.epoch = error ? 0 : epoch;  // a valid epoch stands even with nothing after it: "1:" is before "2:"
    if (!error && colon + 1 == t.size()) error = "nothing after colon in version number";
    t = t.substr(colon + 1);
  }
  const size_t dash = t.rfind('-');
  v.upstream = std::string(t.substr(0, dash));
  v.revision = dash == std::string_view::npos ? "" : std::string(t.substr(dash + 1));
  if (error) return error;
  if (dash != std::string_view::npos && v.revision.empty()) return "revision number is empty";
  if (v.upstream.empty()) return "version number is empty";
  return nullptr;
}

}  // namespace

DebVersion DebVersion::Parse(std::string_view text) {
  DebVersion v;
  ParseLikeDpkg(text, v);
  return v;
}

std::string DebVersion::Problem(std::string_view text) {
  DebVersion v;
  const char* error = ParseLikeDpkg(text, v);
  return error ? error : "";
}

int CompareDebVersions(std::string_view a, std::string_view b) {
  DebVersion x = DebVersion::Parse(a), y = DebVersion::Parse(b);
  if (x.epoch != y.epoch) return x.epoch < y.epoch ? -1 : 1;
  int r = VerRevCmp(x.upstream, y.upstream);
  if (r) return r < 0 ? -1 : 1;
  r = VerRevCmp(x.revision, y.revision);
  return r < 0 ? -1 : (r > 0 ? 1 : 0);
}

// ---- NVIDIA version codes ----
std::string CudnnVersionFromCode(long code) {
  // v8 and older: M*1000 + m*100 + p (8907); v9+: M*10000 + m*100 + p (90600).
  long major, rest;
  if (code >= 10000) {
    major = code / 10000;
    rest = code % 10000;
  } else {
    major = code / 1000;
    rest = code % 1000;
  }
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

std::string NcclVersionFromCode(long code) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z when X<=2 and Y<=8, else X*10000+Y*100+Z.
  long major, rest;
  if (code >= 10000) {
    major = code / 10000;
    rest = code % 10000;
  } else {
    major = code / 1000;
    rest = code % 1000;
  }
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

std::string CudaVersionFromCode(long code) {
  return std::to_string(code / 1000) + "." + std::to_string((code % 1000) / 10);
}

std::optional<Version> UpstreamRelease(const std::string& text) {
  std::string up = text.find(':') != std::string::npos || text.find('-') != std::string::npos
                       ? DebVersion::Parse(text).upstream
                       : text;
  up = up.substr(0, up.find_first_of("-~+"));
  return Version::Parse(up);
}

}  // namespace gp
