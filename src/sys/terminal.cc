// TerminalColumns (terminal.h).
#include "sys/terminal.h"

#include <sys/ioctl.h>

namespace gp::sys {

std::optional<int> TerminalColumns(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return std::nullopt;
  return static_cast<int>(ws.ws_col);
}

std::optional<int> TerminalRows(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0) return std::nullopt;
  return static_cast<int>(ws.ws_row);
}

}  // namespace gp::sys
