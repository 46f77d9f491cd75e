#include "sys/clock.h"

#include <ctime>

namespace gp::sys {

namespace {
std::string Format(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}
}  // namespace

std::string TodayUtc() { return Format("%Y-%m-%d"); }
std::string NowUtc() { return Format("%Y-%m-%dT%H:%M:%SZ"); }

}  // namespace gp::sys
