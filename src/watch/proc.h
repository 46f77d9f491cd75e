// Pure parsers for the /proc and cgroup files the host side of `watch` reads (formats: the kernel's
// Documentation/filesystems/proc.rst, accounting/psi.rst, admin-guide/cgroup-v2.rst and the v1 cpu
// controller's scheduler/sched-bwc.rst). Each takes the file's text and returns nullopt/empty for text
// that is not in that format: the files are read from a live /proc or from a fixture tree, never trusted.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::watch {

struct CpuTimes {      // one "cpuN" line of /proc/stat, in clock ticks
  uint64_t busy = 0;   // user + nice + system + irq + softirq + steal
  uint64_t total = 0;  // busy + idle + iowait
};

struct ProcStat {
  std::vector<CpuTimes> cpus;             // cpu0, cpu1, ... in order (the "cpu" total line is not kept)
  std::optional<unsigned> procs_blocked;  // "procs_blocked N"
};
std::optional<ProcStat> ParseProcStat(std::string_view text);

struct TaskStat {  // /proc/PID/stat or /proc/PID/task/TID/stat
  unsigned pid = 0;
  std::string comm;  // between the first '(' and the last ')': may hold spaces and parentheses
  char state = '?';
  unsigned ppid = 0;
  uint64_t utime = 0, stime = 0;  // clock ticks (fields 14 and 15)
};
std::optional<TaskStat> ParseTaskStat(std::string_view text);

struct PressureLine {
  std::optional<double> some_avg10, full_avg10;
};
// "some avg10=1.23 avg60=... total=...\nfull avg10=..." (/proc/pressure/cpu has "full" since 5.13).
std::optional<PressureLine> ParsePressure(std::string_view text);

// "Cpus_allowed_list:\t0-3,8" in /proc/PID/status -> 5.
std::optional<unsigned> CpusAllowedFromStatus(std::string_view status);

struct CgroupPaths {
  std::optional<std::string> v2;      // "0::/user.slice/..." (the unified hierarchy)
  std::optional<std::string> v1_cpu;  // the path of the v1 hierarchy holding the cpu controller
};
CgroupPaths ParseProcCgroup(std::string_view text);

// cgroup v2 cpu.max "200000 100000" -> 2.0 CPUs; "max 100000" -> unset (no limit).
std::optional<double> ParseCpuMax(std::string_view text);
// v1: cpu.cfs_quota_us (-1 = none) over cpu.cfs_period_us.
std::optional<double> CpuLimitV1(std::string_view quota_us, std::string_view period_us);

struct CpuThrottle {
  std::optional<uint64_t> nr_throttled;
  std::optional<uint64_t> throttled_us;  // v2 throttled_usec; v1 throttled_time (ns) / 1000
};
// cpu.stat of either version ("nr_throttled 3\nthrottled_usec 1200" or "...\nthrottled_time 1200000").
CpuThrottle ParseCpuStat(std::string_view text);

}  // namespace gp::watch
