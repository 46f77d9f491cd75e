// Durations on the command line: a number with ms, s, m or h ("500ms", "1.5s", "10m", "2h"); a bare
// number is seconds.
#pragma once
#include <optional>
#include <string>

namespace gp::watch {

// Milliseconds, or nullopt for anything else (negative, not finite, beyond 30 days, below 1 ms).
std::optional<long long> ParseDuration(const std::string& text);
// "250ms", "2s", "1.5s", "10m", "2h" (the shortest exact form).
std::string FormatDuration(long long ms);

}  // namespace gp::watch
