#include "sys/clock.h"

#include <unistd.h>

#include <chrono>
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

long long UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

long ClockTicksPerSecond() {
  const long t = ::sysconf(_SC_CLK_TCK);
  return t > 0 ? t : 100;
}

}  // namespace gp::sys
