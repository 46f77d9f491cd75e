// PCI VPD parsing (probe/vpd.h): bounds checked at every step; the checksum per PCI Local Bus
// Specification 3.0, I.3.1.1 ("RV": the sum of all bytes from the start of the VPD through the checksum byte
// is zero).
#include "probe/vpd.h"

#include <cctype>
#include <map>

namespace gp::probe {
namespace {

constexpr unsigned kLargeIdentifier = 0x02;  // tag byte 0x82
constexpr unsigned kLargeVpdR = 0x10;        // tag byte 0x90
constexpr unsigned kLargeVpdW = 0x11;        // tag byte 0x91
constexpr unsigned kSmallEnd = 0x0f;         // tag byte 0x78

unsigned Byte(std::string_view b, size_t i) { return static_cast<unsigned char>(b[i]); }

std::string Hex(unsigned v) {
  const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[(v >> 4) & 0xf] + digits[v & 0xf];
}

bool KeywordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The keywords of one VPD-R or VPD-W resource, its data at [begin, end) of `all`. Returns "" or the error.
// For VPD-R, `checksum_ok` is set from the RV keyword (which ends the keyword list).
std::string ParseKeywords(std::string_view all, size_t begin, size_t end, bool writable, Vpd& out,
                          bool* checksum_ok) {
  size_t pos = begin;
  while (pos < end) {
    if (end - pos < 3) return "a keyword header runs past its resource at byte " + std::to_string(pos);
    VpdKeyword kw;
    kw.keyword = std::string(all.substr(pos, 2));
    kw.writable = writable;
    const size_t len = Byte(all, pos + 2);
    if (!KeywordChar(kw.keyword[0]) || !KeywordChar(kw.keyword[1]))
      return "a keyword name is not two letters or digits at byte " + std::to_string(pos);
    if (len > end - pos - 3)
      return "keyword " + kw.keyword + " has length " + std::to_string(len) + " past its resource";
    kw.value = std::string(all.substr(pos + 3, len));
    out.keywords.push_back(kw);
    if (!writable && kw.keyword == "RV") {
      if (len < 1) return "keyword RV has no checksum byte";
      unsigned sum = 0;
      for (size_t i = 0; i <= pos + 3; ++i) sum += Byte(all, i);
      if (checksum_ok) *checksum_ok = (sum & 0xffu) == 0;
      return "";  // RV is the last read-only keyword; what follows in VPD-R is reserved
    }
    if (writable && kw.keyword == "RW") return "";  // the remaining read-write area
    pos += 3 + len;
  }
  return "";
}

std::string TrimValue(std::string_view v) {
  size_t b = 0, e = v.size();
  while (b < e && (v[b] == ' ' || v[b] == '\0')) ++b;
  while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\0')) --e;
  return std::string(v.substr(b, e - b));
}

}  // namespace

Vpd ParseVpd(std::string_view bytes) {
  Vpd v;
  auto fail = [&v](std::string why) {
    v.valid = false;
    v.error = std::move(why);
    return v;
  };
  if (bytes.empty()) return fail("empty");
  if (bytes.size() > kMaxVpdBytes) return fail("larger than " + std::to_string(kMaxVpdBytes) + " bytes");
  bool seen_r = false, seen_w = false, checksum_ok = false;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const unsigned tag = Byte(bytes, pos);
    if ((tag & 0x80u) == 0) {
      if (((tag >> 3) & 0x0fu) != kSmallEnd) return fail("unexpected small resource tag " + Hex(tag));
      if (!seen_r) return fail("no read-only (VPD-R) resource before the end tag");
      if (!checksum_ok) return fail("the RV checksum does not add up");
      v.valid = true;
      return v;
    }
    if (bytes.size() - pos < 3)
      return fail("a large resource header is cut off at byte " + std::to_string(pos));
    const size_t len = Byte(bytes, pos + 1) | (Byte(bytes, pos + 2) << 8);
    const size_t data = pos + 3;
    if (len > bytes.size() - data)
      return fail("resource " + Hex(tag) + " at byte " + std::to_string(pos) + " has length " +
                  std::to_string(len) + " past the end of the data");
    const unsigned name = tag & 0x7fu;
    std::string err;
    if (name == kLargeIdentifier) {
      if (pos != 0) return fail("the identifier string is not first");
      v.identifier = std::string(bytes.substr(data, len));
    } else if (name == kLargeVpdR) {
      if (seen_r) return fail("a second read-only (VPD-R) resource");
      seen_r = true;
      err = ParseKeywords(bytes, data, data + len, false, v, &checksum_ok);
    } else if (name == kLargeVpdW) {
      if (seen_w) return fail("a second read-write (VPD-W) resource");
      seen_w = true;
      err = ParseKeywords(bytes, data, data + len, true, v, nullptr);
    } else {
      return fail("unexpected large resource tag " + Hex(tag));
    }
    if (!err.empty()) return fail(err);
    pos = data + len;
  }
  return fail("no end tag (the data is cut off)");
}

bool IsNvlinkSwitchBridge(const Vpd& vpd) {
  if (!vpd.valid) return false;
  std::map<std::string, std::string> vendor;  // "V3" -> its value
  for (const auto& k : vpd.keywords)
    if (!k.writable && k.keyword[0] == 'V') vendor[k.keyword] = TrimValue(k.value);
  for (const auto& [name, value] : vendor) {
    std::string_view rest = value;
    // An optional "MLX:" style prefix before the first field.
    const size_t colon = rest.find(':');
    if (colon != std::string_view::npos &&
        rest.substr(0, colon).find_first_of("=;") == std::string_view::npos)
      rest.remove_prefix(colon + 1);
    while (!rest.empty()) {
      const size_t semi = rest.find(';');
      std::string_view field = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      const size_t eq = field.find('=');
      if (eq == std::string_view::npos || TrimValue(field.substr(0, eq)) != "SMDL") continue;
      const std::string target = TrimValue(field.substr(eq + 1));
      if (target == "SW_MNG") return true;
      if (auto it = vendor.find(target); target.size() == 2 && it != vendor.end() && it->second == "SW_MNG")
        return true;
    }
  }
  return false;
}

}  // namespace gp::probe
