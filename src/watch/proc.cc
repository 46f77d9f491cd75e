#include "watch/proc.h"

#include <charconv>
#include <cstdlib>

#include "util/strings.h"

namespace gp::watch {
namespace {

// Blank-separated words and '\n'-separated lines (util/strings.h).
std::vector<std::string> Words(std::string_view line) { return SplitWords(line); }
std::vector<std::string> Lines(std::string_view text) { return Split(text, '\n'); }

template <typename T>
std::optional<T> Number(std::string_view s) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> Decimal(std::string_view s) {
  // strtod needs a terminated string; the values are short ("12.34").
  if (s.empty() || s.size() > 32) return std::nullopt;
  std::string t(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !(v >= 0) || v > 1e12) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat st;
  bool saw_total = false;
  for (const std::string& line : Lines(text)) {
    auto w = Words(line);
    if (w.empty()) continue;
    if (w[0] == "cpu") {
      saw_total = true;
      continue;
    }
    if (w[0].size() > 3 && w[0].substr(0, 3) == "cpu") {
      if (!Number<unsigned>(w[0].substr(3)) || w.size() < 5) return std::nullopt;
      uint64_t f[8] = {};
      for (size_t i = 1; i < w.size() && i <= 8; ++i) {
        auto v = Number<uint64_t>(w[i]);
        if (!v) return std::nullopt;
        f[i - 1] = *v;
      }
      // user nice system idle iowait irq softirq steal (guest time is already inside user)
      CpuTimes c;
      c.busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
      c.total = c.busy + f[3] + f[4];
      st.cpus.push_back(c);
    } else if (w[0] == "procs_blocked" && w.size() == 2) {
      st.procs_blocked = Number<unsigned>(w[1]);
    }
  }
  if (!saw_total || st.cpus.empty()) return std::nullopt;
  return st;
}

std::optional<TaskStat> ParseTaskStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  TaskStat t;
  auto pid = Number<unsigned>(Trim(text.substr(0, open)));
  if (!pid) return std::nullopt;
  t.pid = *pid;
  t.comm = std::string(text.substr(open + 1, close - open - 1));
  if (t.comm.size() > 64) return std::nullopt;  // TASK_COMM_LEN is 16
  auto rest = Words(text.substr(close + 1));
  // rest[0] = field 3 (state), rest[1] = ppid (4), rest[11] = utime (14), rest[12] = stime (15)
  if (rest.size() < 13 || rest[0].size() != 1) return std::nullopt;
  t.state = rest[0][0];
  auto ppid = Number<unsigned>(rest[1]);
  auto ut = Number<uint64_t>(rest[11]);
  auto stime = Number<uint64_t>(rest[12]);
  if (!ppid || !ut || !stime) return std::nullopt;
  t.ppid = *ppid;
  t.utime = *ut;
  t.stime = *stime;
  return t;
}

std::optional<PressureLine> ParsePressure(std::string_view text) {
  PressureLine p;
  for (const std::string& line : Lines(text)) {
    auto w = Words(line);
    if (w.size() < 2 || w[1].substr(0, 6) != "avg10=") continue;
    auto v = Decimal(w[1].substr(6));
    if (!v) return std::nullopt;
    if (w[0] == "some")
      p.some_avg10 = v;
    else if (w[0] == "full")
      p.full_avg10 = v;
  }
  if (!p.some_avg10) return std::nullopt;
  return p;
}

std::optional<unsigned> CpusAllowedFromStatus(std::string_view status) {
  for (const std::string& line : Lines(status)) {
    constexpr std::string_view key = "Cpus_allowed_list:";
    if (line.substr(0, key.size()) != key) continue;
    const std::string_view list = Trim(std::string_view(line).substr(key.size()));
    unsigned count = 0;
    for (const std::string& part : Split(list, ',')) {
      const size_t dash = part.find('-');
      auto lo = Number<unsigned>(std::string_view(part).substr(0, dash));
      auto hi = dash == std::string::npos ? lo : Number<unsigned>(std::string_view(part).substr(dash + 1));
      if (!lo || !hi || *hi < *lo || *hi - *lo > 65535) return std::nullopt;
      count += *hi - *lo + 1;
    }
    if (count == 0) return std::nullopt;
    return count;
  }
  return std::nullopt;
}

CgroupPaths ParseProcCgroup(std::string_view text) {
  CgroupPaths p;
  for (const std::string& line : Lines(text)) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::string path(line.substr(b + 1));
    if (path.empty() || path[0] != '/' || path.find("/..") != std::string::npos) continue;
    if (line.substr(0, a) == "0" && controllers.empty()) {
      p.v2 = path;
      continue;
    }
    for (const std::string& c : Split(controllers, ','))
      if (c == "cpu") p.v1_cpu = path;
  }
  return p;
}

std::optional<double> ParseCpuMax(std::string_view text) {
  auto w = Words(text.substr(0, text.find('\n')));
  if (w.size() != 2 || w[0] == "max") return std::nullopt;
  auto quota = Number<uint64_t>(w[0]);
  auto period = Number<uint64_t>(w[1]);
  if (!quota || !period || *period == 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<double> CpuLimitV1(std::string_view quota_us, std::string_view period_us) {
  auto quota = Number<long long>(Trim(quota_us));
  auto period = Number<long long>(Trim(period_us));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

CpuThrottle ParseCpuStat(std::string_view text) {
  CpuThrottle t;
  for (const std::string& line : Lines(text)) {
    auto w = Words(line);
    if (w.size() != 2) continue;
    auto v = Number<uint64_t>(w[1]);
    if (!v) continue;
    if (w[0] == "nr_throttled")
      t.nr_throttled = v;
    else if (w[0] == "throttled_usec")
      t.throttled_us = v;
    else if (w[0] == "throttled_time")
      t.throttled_us = *v / 1000;
  }
  return t;
}

}  // namespace gp::watch
