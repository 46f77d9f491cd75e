#include "watch/duration.h"

#include <cmath>
#include <cstdlib>

namespace gp::watch {

std::optional<long long> ParseDuration(const std::string& text) {
  size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  if (end == 0 || text.find_first_of('.', 0) != text.find_last_of('.')) return std::nullopt;
  const std::string number = text.substr(0, end), unit = text.substr(end);
  if (number == ".") return std::nullopt;
  const double v = std::strtod(number.c_str(), nullptr);
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1000;
  else if (unit == "ms")
    scale = 1;
  else if (unit == "m")
    scale = 60000;
  else if (unit == "h")
    scale = 3600000;
  else
    return std::nullopt;
  const double ms = std::round(v * scale);
  if (!std::isfinite(ms) || ms < 1 || ms > 30.0 * 24 * 3600000) return std::nullopt;
  return static_cast<long long>(ms);
}

std::string FormatDuration(long long ms) {
  if (ms % 3600000 == 0 && ms >= 3600000) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0 && ms >= 60000) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  if (ms > 1000 && ms % 100 == 0)
    return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace gp::watch
