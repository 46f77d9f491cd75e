// Number formatting shared by the estimate's formulas and the renderers (decimal units, as GPU memory is
// sold and as the ZeRO paper counts: 1 GB = 10^9 bytes).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gp::size {

// A byte count as a whole number, for JSON (1.5 -> 2); an estimate at or past 2^63 bytes (an impossible
// task: a sequence of millions of tokens, eager attention) is written as 2^63 - 1, never wrapped.
inline int64_t WholeBytes(double bytes) {
  if (!(bytes < 9223372036854775808.0)) return INT64_MAX;
  return static_cast<int64_t>(std::llround(bytes));
}

// 120000000000 -> "120.00 GB"; below 1 GB in MB.
inline std::string Gb(double bytes) {
  char buf[48];
  if (bytes >= 1e9 || bytes == 0)
    std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

// 120000000000 -> "120.00" (GB, for table columns).
inline std::string GbNum(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / 1e9);
  return buf;
}

// 68976648192 -> "68.98B", 9175040 -> "9.18M", 4096 -> "4096".
inline std::string Count(double n) {
  char buf[48];
  if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

// 2 -> "2", 0.5625 -> "0.5625", 6.0 -> "6".
inline std::string Bytes(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", b);
  return buf;
}

}  // namespace gp::size
