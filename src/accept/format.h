// How accept prints a figure: four significant digits ("794.5", "2.9", "1.9e+12" never appears for the
// quantities judged). One formatter for the verdict reasons and the renderers.
#pragma once
#include <cstdio>
#include <string>

namespace gp::accept {

inline std::string FormatFigure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace gp::accept
