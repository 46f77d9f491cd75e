// Parsers of the Xid lines of the kernel log (util/kernel_xid.h).
#include "util/kernel_xid.h"

namespace gp {
// The helpers have a namespace of their own: a unity batch joins this file with others of util/.
namespace kernel_xid {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Reads `n_min`..`n_max` hex digits at `pos`, lowercased.
std::optional<std::string> HexRun(std::string_view s, size_t& pos, size_t n_min, size_t n_max) {
  size_t n = 0;
  while (pos + n < s.size() && n < n_max + 1 && IsHex(s[pos + n])) ++n;
  if (n < n_min || n > n_max) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < n; ++i) out += Lower(s[pos + i]);
  pos += n;
  return out;
}

// "0000:18:00", "18:00" (domain 0000), "0018:01:00", "10000:01:00" (a VMD domain) -> "DDDD:BB:DD".
std::optional<std::string> ParsePci(std::string_view s) {
  size_t pos = 0;
  auto a = HexRun(s, pos, 2, 8);
  if (!a || pos >= s.size() || s[pos] != ':') return std::nullopt;
  ++pos;
  auto b = HexRun(s, pos, 2, 2);
  if (!b) return std::nullopt;
  if (pos == s.size()) {  // "BB:DD"
    if (a->size() != 2) return std::nullopt;
    return "0000:" + *a + ":" + *b;
  }
  if (s[pos] != ':') return std::nullopt;
  ++pos;
  auto c = HexRun(s, pos, 2, 2);
  if (!c || pos != s.size() || a->size() < 4) return std::nullopt;
  return *a + ":" + *b + ":" + *c;
}

// Printable ASCII kept, anything else replaced by '?', at most `max` bytes.
std::string Clean(std::string_view s, size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// A "key=value" field: the value up to the next ", " (quotes and "<unknown>" dropped).
std::string FieldValue(std::string_view v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
  if (v == "<unknown>") return "";
  return Clean(v, 64);
}

bool ParseU64(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

}  // namespace
}  // namespace kernel_xid

std::string CleanLogText(std::string_view s, size_t max) { return kernel_xid::Clean(s, max); }

std::optional<XidLine> ParseXidLine(std::string_view message) {
  message = message.substr(0, kMaxKernelLogLine);
  const std::string_view key = "NVRM: Xid (";
  const size_t at = message.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + key.size());
  const size_t close = rest.find(')');
  if (close == std::string_view::npos || close > 24) return std::nullopt;
  std::string_view addr = rest.substr(0, close);
  if (addr.substr(0, 4) == "PCI:") addr.remove_prefix(4);
  auto pci = kernel_xid::ParsePci(addr);
  if (!pci) return std::nullopt;
  rest = rest.substr(close + 1);
  if (rest.substr(0, 2) != ": ") return std::nullopt;
  rest.remove_prefix(2);
  size_t n = 0;
  while (n < rest.size() && kernel_xid::IsDigit(rest[n])) ++n;
  if (n == 0 || n > 5) return std::nullopt;
  if (n < rest.size() && rest[n] != ',') return std::nullopt;
  XidLine ev;
  for (size_t i = 0; i < n; ++i) ev.code = ev.code * 10 + (rest[i] - '0');
  if (ev.code == 0) return std::nullopt;
  ev.pci = *pci;
  rest.remove_prefix(n);
  if (!rest.empty()) rest.remove_prefix(1);  // ','
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  for (auto [field, out] :
       {std::pair<std::string_view, std::string*>{"pid=", &ev.pid}, {"name=", &ev.process}}) {
    if (rest.substr(0, field.size()) != field) continue;
    rest.remove_prefix(field.size());
    const size_t end = rest.find(", ");
    *out = kernel_xid::FieldValue(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
  }
  ev.detail = kernel_xid::Clean(rest, kMaxXidDetail);
  return ev;
}

std::optional<KmsgRecord> ParseKmsgRecord(std::string_view line) {
  const size_t semi = line.find(';');
  if (semi == std::string_view::npos || semi > 64) return std::nullopt;
  std::string_view head = line.substr(0, semi);
  std::string_view parts[4];
  size_t n = 0, start = 0;
  while (n < 4) {
    const size_t comma = head.find(',', start);
    parts[n++] = head.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  uint64_t prio = 0;
  KmsgRecord r;
  // Later kernels may add fields after the flags ("6,1,2,-,caller=T1;"): the first three are what counts.
  if (n < 3 || !kernel_xid::ParseU64(parts[0], prio) || !kernel_xid::ParseU64(parts[1], r.seq) ||
      !kernel_xid::ParseU64(parts[2], r.usec))
    return std::nullopt;
  r.message = line.substr(semi + 1);
  return r;
}

}  // namespace gp
