// The clock seam: today's date for checks that depend on it (a driver branch's end of life). Only main
// reads the real clock; tests pass a fixed date through cli::Context::today.
#pragma once
#include <string>

namespace gp::sys {

std::string TodayUtc();  // "YYYY-MM-DD"
std::string NowUtc();    // "YYYY-MM-DDTHH:MM:SSZ" (journal and status timestamps)

}  // namespace gp::sys
