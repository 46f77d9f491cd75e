// The clock seam: today's date for checks that depend on it (a driver branch's end of life), the wall
// clock for watch's samples. Only main reads the real clock; tests pass a fixed date through
// cli::Context::today.
#pragma once
#include <string>

namespace gp::sys {

std::string TodayUtc();  // "YYYY-MM-DD"
std::string NowUtc();    // "YYYY-MM-DDTHH:MM:SSZ" (journal and status timestamps)
long long UnixMillis();  // the wall clock, milliseconds since 1970 (UTC)
// The unit of the times in /proc/<pid>/stat: sysconf(_SC_CLK_TCK), clock ticks per second.
long ClockTicksPerSecond();

}  // namespace gp::sys
