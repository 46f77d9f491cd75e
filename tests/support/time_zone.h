// A time zone for one test: TZ set (a POSIX rule, no tzdata needed) and restored afterwards, so a test that
// reads local time gives the same answer on every machine.
#pragma once
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace gp::test {

class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* rule) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    ::setenv("TZ", rule, 1);
    ::tzset();
  }
  ~ScopedTimeZone() {
    if (old_)
      ::setenv("TZ", old_->c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }
  ScopedTimeZone(const ScopedTimeZone&) = delete;
  ScopedTimeZone& operator=(const ScopedTimeZone&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace gp::test
