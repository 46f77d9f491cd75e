// HTML text and attribute values from outside (hosts, snapshots, recordings): printable through TerminalSafe,
// and & < > " ' as entities. Shared by the fleet report and the acceptance report.
#pragma once
#include <string>
#include <string_view>

#include "util/input.h"

namespace gp {

inline std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (char c : TerminalSafe(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace gp
