// Look-ups over the generated Xid catalogue (xid_catalogue.cc).
#include <algorithm>

#include "util/xid_catalogue.h"

namespace gp {

const XidInfo* FindXid(int code) {
  const auto& t = XidCatalogue();
  auto it = std::lower_bound(t.begin(), t.end(), code, [](const XidInfo& x, int c) { return x.code < c; });
  return it != t.end() && it->code == code ? &*it : nullptr;
}

const char* XidClassName(XidClass c) {
  switch (c) {
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kMemory:
      return "memory";
    case XidClass::kFabric:
      return "fabric";
    case XidClass::kApplication:
      return "application";
    case XidClass::kDriver:
      return "driver";
    case XidClass::kMeta:
      return "meta";
    case XidClass::kUnused:
      return "unused";
  }
  return "unknown";
}

}  // namespace gp

namespace gp {
namespace {

bool ParseHex32(std::string_view s, unsigned& out) {
  if (s.size() < 3 || s.size() > 10 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  out = 0;
  for (char c : s.substr(2)) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return false;
    out = out * 16 + static_cast<unsigned>(d);
  }
  return true;
}

bool PatternMatches(std::string_view pattern, unsigned value) {
  if (pattern.size() != 32) return false;
  for (size_t i = 0; i < 32; ++i) {
    const unsigned bit = (value >> (31 - i)) & 1u;
    if ((pattern[i] == '1' && bit == 0) || (pattern[i] == '0' && bit == 1)) return false;
  }
  return true;
}

// Whether the logged unit is the rule's or one of its '/'-separated alternatives.
bool UnitMatches(std::string_view rule, std::string_view unit) {
  if (rule == unit) return true;
  size_t start = 0;
  while (start <= rule.size()) {
    const size_t slash = std::min(rule.find('/', start), rule.size());
    if (rule.substr(start, slash - start) == unit) return true;
    start = slash + 1;
  }
  return false;
}

std::vector<std::string_view> NvlinkWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size() && out.size() < 9) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool ParseLink(std::string_view s, int& out) {
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty() || s.size() > 3) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  if (neg) out = -out;
  return true;
}

}  // namespace

std::optional<NvlinkXid> DecodeNvlinkXid(int code, std::string_view detail) {
  if (code < 144 || code > 150) return std::nullopt;
  // UNIT Fatal|Nonfatal XCn iN Link N (0xINTRINFO 0xSTATUS ...
  const std::vector<std::string_view> w = NvlinkWords(detail);
  if (w.size() < 8 || w[0].size() > 64 || (w[1] != "Fatal" && w[1] != "Nonfatal") || w[4] != "Link" ||
      w[6].empty() || w[6][0] != '(')
    return std::nullopt;
  for (char c : w[0])
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '/')) return std::nullopt;
  NvlinkXid x;
  std::string_view status = w[7];
  if (!status.empty() && status.back() == ')') status.remove_suffix(1);
  if (!ParseLink(w[5], x.link) || !ParseHex32(w[6].substr(1), x.intrinfo) ||
      !ParseHex32(status, x.error_status))
    return std::nullopt;
  x.unit = std::string(w[0]);
  x.severity = std::string(w[1]);
  for (const XidNvlinkRule& r : XidNvlinkDecode())
    if (r.code == code && r.error_status == x.error_status && UnitMatches(r.unit, x.unit) &&
        (PatternMatches(r.intrinfo_v2, x.intrinfo) || PatternMatches(r.intrinfo_v1, x.intrinfo))) {
      x.rule = &r;
      break;
    }
  return x;
}

std::string XidHealthCode(int code) {
  const XidInfo* x = FindXid(code);
  if (!x) return "gpu.xid-unknown";
  if (x->cls == XidClass::kMeta) return "gpu.xid-recovery-changed";
  return std::string("gpu.xid-") + XidClassName(x->cls);
}

}  // namespace gp
