// The host side of a watch tick, read from /proc (and the cgroup files under /sys/fs/cgroup) through the
// Fs seam, so fixture trees stand in for a live host in tests. Per tick: CPU per core, tasks in D state
// host-wide, pressure stall information, and for every GPU process NVML lists and each of its descendants
// (PyTorch's DataLoader workers name themselves pt_data_worker: torch/utils/data/_utils/worker.py calls
// torch.multiprocessing._set_thread_name("pt_data_worker")) its CPU, state, allowed CPUs and cgroup CPU
// limit and throttling. Cost is kept per tick to the processes that matter: descendants are looked for
// only every `rescan_ms` or when the set of GPU processes changes; all threads
// of the GPU processes and their loaders are read every `threads_ms`. Descendants are found through the
// kernel's /proc/PID/task/TID/children lists where it has them, else from every process's parent in
// /proc/PID/stat.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "watch/proc.h"
#include "watch/sample.h"

namespace gp::watch {

// The name PyTorch's DataLoader gives its worker processes.
inline constexpr const char* kLoaderWorkerName = "pt_data_worker";

// Whether this process runs in a pid namespace other than the kernel's initial one (a container started
// without --pid=host): /proc/self/ns/pid names another namespace than "pid:[4026531836]", the inode the
// kernel gives the initial one (PROC_PID_INIT_INO = 0xEFFFFFFC, include/linux/proc_ns.h). NVML reports
// host PIDs, which there name other processes or none. False when the link cannot be read (unknown: the
// PIDs are then checked one by one against /proc).
bool InChildPidNamespace(const sys::Fs& fs);

struct HostSamplerOptions {
  long ticks_per_second = 100;  // the unit of /proc/PID/stat times (sysconf(_SC_CLK_TCK))
  long long rescan_ms = 10000;
  long long threads_ms = 5000;
};

class HostSampler {
 public:
  HostSampler(const sys::Fs& fs, HostSamplerOptions options)
      : fs_(fs), opt_(options), child_pid_namespace_(InChildPidNamespace(fs)) {}

  // One tick at `time_ms` (any monotonic millisecond count): `gpu_pids` maps each PID NVML reported to
  // the GPU indexes it runs on.
  HostSample Sample(long long time_ms, const std::map<unsigned, std::vector<unsigned>>& gpu_pids);

  // Whether NVML's `pid` names a process here: /proc/PID exists and this is the initial pid namespace.
  bool PidVisible(unsigned pid) const;

  // The job of NVML's `pid` (watch/job.h): from its /proc/PID/cgroup, read with its other static facts
  // (every `rescan_ms`) while it is a GPU process, else now; "unknown" with the reason when the PID is
  // not visible here or its cgroup file cannot be read.
  Job JobOf(unsigned pid) const;

 private:
  struct Known {  // what is remembered about one process between ticks
    uint64_t cpu_ticks = 0;
    long long at_ms = 0;
    bool have = false;
    uint64_t main_ticks = 0;
    bool have_main = false;
    std::optional<unsigned> cpus_allowed;
    std::optional<double> cgroup_limit;
    std::string cgroup_cpu_stat;  // the cpu.stat path, "" when none was found
    std::optional<CpuThrottle> throttle;
    std::optional<Job> job;       // GPU processes: from /proc/PID/cgroup
    long long static_at_ms = -1;  // when allowed CPUs and cgroup were last read
  };
  struct ThreadTicks {
    uint64_t ticks = 0;
    long long at_ms = 0;
  };

  void ReadCpus(HostSample& out);
  void ReadPressure(HostSample& out) const;
  void Rescan(const std::set<unsigned>& roots);
  void ReadStatic(unsigned pid, Known& k, long long time_ms, bool cgroup) const;
  void ReadCgroupThrottle(Known& k, HostProcess& p) const;
  void ReadThreads(unsigned pid, HostProcess& p, long long time_ms);
  std::map<unsigned, std::vector<unsigned>> GpuFamily(
      const std::set<unsigned>& roots, const std::map<unsigned, std::vector<unsigned>>& gpu_pids,
      std::map<unsigned, bool>& is_root) const;
  void ReadMainThread(unsigned pid, bool had, long long since, Known& k, HostProcess& p) const;
  HostProcess ReadProcess(unsigned pid, const TaskStat& st, const std::vector<unsigned>& gpus, bool root,
                          Known& k, long long time_ms) const;
  void ForgetThreads(const HostSample& out);
  double CpuPct(uint64_t ticks, long long ms) const;

  const sys::Fs& fs_;
  HostSamplerOptions opt_;
  bool child_pid_namespace_;
  std::vector<CpuTimes> prev_cpus_;
  std::map<unsigned, Known> known_;
  std::map<unsigned, ThreadTicks> thread_ticks_;
  std::map<unsigned, std::vector<unsigned>> children_;  // ppid -> pids, from the last scan
  std::set<unsigned> scanned_roots_;
  long long scanned_at_ms_ = -1;
  long long threads_at_ms_ = -1;
};

}  // namespace gp::watch
