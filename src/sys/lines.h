// Streaming line reader for files too large to read whole (a `watch --json` recording of a long run):
// one chunk in memory at a time.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gp::sys {

// Calls `fn(line, number)` for every line of the file at `path` (a path on this machine), without its
// '\n' (a final line without one counts too); 1-based numbers. Stops early when `fn` returns false.
// Returns "" or one line of error: the file cannot be opened or read, is not a regular file, or has a
// line longer than `max_line` bytes ("PATH:N: line longer than M bytes").
std::string ForEachLine(const std::string& path, size_t max_line,
                        const std::function<bool(std::string_view line, size_t number)>& fn);

}  // namespace gp::sys
