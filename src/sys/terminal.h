// The terminal stdout is (watch's live table): its width and height, asked each redraw so a resize takes
// effect at the next one.
#pragma once
#include <optional>

namespace gp::sys {

// The columns of the terminal on `fd` (TIOCGWINSZ), nullopt when it is not a terminal or says 0.
std::optional<int> TerminalColumns(int fd);
// Its rows, the same way.
std::optional<int> TerminalRows(int fd);

}  // namespace gp::sys
