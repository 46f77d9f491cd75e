#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace gp {

std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string> SplitWords(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

bool Contains(const std::vector<std::string>& items, std::string_view s) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

std::optional<unsigned long long> ParseUnsigned(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    unsigned long long d = static_cast<unsigned long long>(c - '0');
    if (v > (~0ULL - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and adjacent transpositions ("cdua").
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = 0;
  for (const auto& c : candidates) {
    size_t d = EditDistance(ToLower(word), ToLower(c));
    if (!best || d < best_d) {
      best = c;
      best_d = d;
    }
  }
  size_t limit = std::max<size_t>(1, word.size() / 3);
  if (best && best_d <= limit) return best;
  return std::nullopt;
}

std::string HumanBytes(unsigned long long bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  unsigned long long whole = bytes;
  while (u < 5 && whole >= 1024 && whole % 1024 == 0) {
    whole /= 1024;
    ++u;
  }
  if (whole < 1024 || u == 5) return std::to_string(whole) + " " + kUnits[u];
  double v = static_cast<double>(bytes);
  u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::optional<unsigned long long> ParseBytes(std::string_view s) {
  // go-units v0.5.0's parseSize (size.go at e682442797b3), on the decimal numbers gpuprep takes: the number,
  // at most one space, then a suffix of at most three letters in any case: none, "b", a unit letter, the
  // letter and "b", or the letter and "ib". ("i" alone, "ki", "ib" were read by 0.4.0's older sizeRegex.)
  size_t i = 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return std::nullopt;
  }
  const std::string_view number = s.substr(0, i);
  if (i < s.size() && s[i] == ' ') ++i;
  int shift = 0;
  if (i < s.size()) {
    static const char kUnits[] = "kmgtp";
    const char* u = std::strchr(kUnits, s[i] | 0x20);
    if (u && *u) {
      shift = 10 * static_cast<int>(u - kUnits + 1);
      ++i;
      if (i + 1 < s.size() && (s[i] | 0x20) == 'i') ++i;  // "ib", never "i" alone
    }
  }
  if (i < s.size() && (s[i] | 0x20) == 'b') ++i;
  if (i != s.size()) return std::nullopt;
  // As go-units: the number as the nearest double (strconv.ParseFloat), times the unit, truncated. A power of
  // two multiplies exactly. Docker's int64 overflows from 2^63 on; those are refused here.
  double v = 0;
  const auto r = std::from_chars(number.data(), number.data() + number.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    if (number.find_first_not_of("0.") < number.find('.')) return std::nullopt;  // >= 1: overflowed
    v = 0;                                                                       // < 1: underflowed
  } else if (r.ec != std::errc() || r.ptr != number.data() + number.size()) {
    return std::nullopt;
  }
  v = std::ldexp(v, shift);
  if (!(v < 9223372036854775808.0)) return std::nullopt;
  return static_cast<unsigned long long>(v);
}

namespace {
// The unit letters of a size, in order: letter i (from 1) is 10^(3i) as "xB" and 2^(10i) as "xiB".
constexpr std::string_view kSizeLetters = "kmgtp";
}  // namespace

bool ParseSize(std::string_view text, uint64_t* out) {
  const std::string s(Trim(text));
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  const std::string num = s.substr(0, i), unit = ToLower(s.substr(i));
  if (num.empty() || num.size() > 24 || std::count(num.begin(), num.end(), '.') > 1 || num.front() == '.' ||
      num.back() == '.')
    return false;
  double mult = 1;  // "" or "b": bytes
  if (!unit.empty() && unit != "b") {
    const size_t letter = unit.size() >= 2 ? kSizeLetters.find(unit[0]) : std::string_view::npos;
    const std::string_view rest = std::string_view(unit).substr(1);
    if (letter == std::string_view::npos || (rest != "b" && rest != "ib")) return false;
    const int n = static_cast<int>(letter) + 1;
    mult = rest == "ib" ? std::ldexp(1.0, 10 * n) : std::pow(1000.0, n);
  }
  const double v = std::strtod(num.c_str(), nullptr) * mult;
  if (!std::isfinite(v) || v >= 9223372036854775808.0) return false;  // 2^63 bytes or more
  *out = static_cast<uint64_t>(std::llround(v));
  return true;
}

std::string BareUnitHint(std::string_view text) {
  const std::string s(Trim(text));
  const size_t letter =
      s.size() < 2 ? std::string_view::npos : kSizeLetters.find(ToLower(s.substr(s.size() - 1)));
  if (letter == std::string_view::npos) return "";
  const std::string number = s.substr(0, s.size() - 1);
  if (number.find_first_not_of("0123456789.") != std::string::npos || !std::isdigit(number.front()))
    return "";
  const int n = static_cast<int>(letter) + 1;
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  const std::string dec = u == 'K' ? "k" : std::string(1, u);
  return "; write " + number + dec + "B for " + number + " x 10^" + std::to_string(3 * n) + " bytes or " +
         number + u + "iB for " + number + " x 2^" + std::to_string(10 * n);
}

std::string LastLine(std::string_view text) {
  auto lines = Split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!Trim(*it).empty()) return std::string(Trim(*it));
  return "";
}

}  // namespace gp
