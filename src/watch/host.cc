#include "watch/host.h"

#include <algorithm>
#include <charconv>
#include <deque>

#include "util/input.h"
#include "util/strings.h"
#include "watch/job.h"

namespace gp::watch {
namespace {

constexpr size_t kStatMax = 4096;    // /proc/PID/stat is one line of ~52 fields
constexpr size_t kSmallMax = 16384;  // status, cgroup, cpu.stat, pressure files
constexpr size_t kMaxDescendants = 4096;
constexpr size_t kMaxThreads = 4096;

std::optional<unsigned> ParsePid(const std::string& name) {
  unsigned v = 0;
  auto r = std::from_chars(name.data(), name.data() + name.size(), v);
  if (r.ec != std::errc() || r.ptr != name.data() + name.size() || v == 0) return std::nullopt;
  return v;
}

std::string ProcPath(unsigned pid, const char* leaf) { return "/proc/" + std::to_string(pid) + "/" + leaf; }

// The cgroup-v1 mount points of the cpu controller under common layouts (systemd mounts it as
// "cpu,cpuacct" with a "cpu" link; some hosts mount "cpu" alone).
const char* const kV1CpuMounts[] = {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"};

}  // namespace

bool InChildPidNamespace(const sys::Fs& fs) {
  auto link = fs.ReadLink("/proc/self/ns/pid");
  return link && link->rfind("pid:[", 0) == 0 && *link != "pid:[4026531836]";
}

bool HostSampler::PidVisible(unsigned pid) const {
  return !child_pid_namespace_ && fs_.Exists("/proc/" + std::to_string(pid));
}

Job HostSampler::JobOf(unsigned pid) const {
  if (child_pid_namespace_) return UnknownJob("NVML's host PID is not in this pid namespace (a container)");
  if (auto k = known_.find(pid); k != known_.end() && k->second.job) return *k->second.job;
  if (!fs_.Exists("/proc/" + std::to_string(pid)))
    return UnknownJob("the PID is not in /proc (ended, or hidden)");
  auto cg = fs_.ReadPrefix(ProcPath(pid, "cgroup"), kSmallMax);
  return cg ? JobFromProcCgroup(*cg) : UnknownJob("/proc/PID/cgroup cannot be read");
}

double HostSampler::CpuPct(uint64_t ticks, long long ms) const {
  if (ms <= 0 || opt_.ticks_per_second <= 0) return 0;
  const double seconds = static_cast<double>(ticks) / static_cast<double>(opt_.ticks_per_second);
  return 100.0 * seconds / (static_cast<double>(ms) / 1000.0);
}

void HostSampler::ReadCpus(HostSample& out) {
  auto text = fs_.ReadPrefix("/proc/stat", 1 << 20);
  auto st = text ? ParseProcStat(*text) : std::nullopt;
  if (!st) return;
  out.cpu_count = static_cast<unsigned>(st->cpus.size());
  out.procs_blocked = st->procs_blocked;
  if (prev_cpus_.size() == st->cpus.size()) {
    for (size_t i = 0; i < st->cpus.size(); ++i) {
      const uint64_t dt = st->cpus[i].total - std::min(prev_cpus_[i].total, st->cpus[i].total);
      const uint64_t db = st->cpus[i].busy - std::min(prev_cpus_[i].busy, st->cpus[i].busy);
      out.cpu_busy_pct.push_back(
          dt == 0 ? 0.0 : std::min(100.0, 100.0 * static_cast<double>(db) / static_cast<double>(dt)));
    }
  }
  prev_cpus_ = std::move(st->cpus);
}

void HostSampler::ReadPressure(HostSample& out) const {
  auto cpu = fs_.ReadPrefix("/proc/pressure/cpu", kSmallMax);
  auto io = fs_.ReadPrefix("/proc/pressure/io", kSmallMax);
  auto mem = fs_.ReadPrefix("/proc/pressure/memory", kSmallMax);
  auto pc = cpu ? ParsePressure(*cpu) : std::nullopt;
  auto pi = io ? ParsePressure(*io) : std::nullopt;
  auto pm = mem ? ParsePressure(*mem) : std::nullopt;
  if (!pc && !pi && !pm) return;  // no PSI (CONFIG_PSI off, or psi=0 on the kernel command line)
  Pressure p;
  if (pc) p.cpu_some_avg10 = pc->some_avg10;
  if (pi) {
    p.io_some_avg10 = pi->some_avg10;
    p.io_full_avg10 = pi->full_avg10;
  }
  if (pm) {
    p.memory_some_avg10 = pm->some_avg10;
    p.memory_full_avg10 = pm->full_avg10;
  }
  out.pressure = p;
}

void HostSampler::Rescan(const std::set<unsigned>& roots) {
  children_.clear();
  scanned_roots_ = roots;
  // The kernel lists each task's children in /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, proc(5)):
  // walking down from the GPU processes reads a few hundred small files instead of every /proc/PID/stat.
  const unsigned probe = *roots.begin();
  if (fs_.Exists("/proc/" + std::to_string(probe) + "/task/" + std::to_string(probe) + "/children")) {
    std::deque<unsigned> queue(roots.begin(), roots.end());
    std::set<unsigned> seen(roots.begin(), roots.end());
    while (!queue.empty() && seen.size() < kMaxDescendants) {
      const unsigned pid = queue.front();
      queue.pop_front();
      const std::string task = ProcPath(pid, "task");
      size_t n = 0;
      for (const std::string& tid : fs_.List(task)) {
        if (++n > kMaxThreads) break;
        auto text = fs_.ReadPrefix(task + "/" + tid + "/children", 1 << 16);
        if (!text) continue;
        for (char& c : *text)
          if (c == '\n') c = ' ';
        for (const std::string& word : SplitWords(*text)) {
          auto child = ParsePid(word);
          if (!child || !seen.insert(*child).second) continue;
          children_[pid].push_back(*child);
          queue.push_back(*child);
        }
      }
    }
    return;
  }
  for (const std::string& name : fs_.List("/proc")) {  // without it: every process's parent
    auto pid = ParsePid(name);
    if (!pid) continue;
    auto text = fs_.ReadPrefix(ProcPath(*pid, "stat"), kStatMax);
    auto st = text ? ParseTaskStat(*text) : std::nullopt;
    if (st && st->ppid != 0 && st->ppid != *pid) children_[st->ppid].push_back(*pid);
  }
}

void HostSampler::ReadStatic(unsigned pid, Known& k, long long time_ms, bool cgroup) const {
  k.static_at_ms = time_ms;
  if (auto status = fs_.ReadPrefix(ProcPath(pid, "status"), kSmallMax))
    k.cpus_allowed = CpusAllowedFromStatus(*status);
  k.cgroup_limit.reset();
  k.cgroup_cpu_stat.clear();
  k.job.reset();
  if (!cgroup) return;
  auto cg = fs_.ReadPrefix(ProcPath(pid, "cgroup"), kSmallMax);
  k.job = cg ? JobFromProcCgroup(*cg) : UnknownJob("/proc/PID/cgroup cannot be read");
  if (!cg) return;
  CgroupPaths paths = ParseProcCgroup(*cg);
  // The limit that binds is the smallest along the path to the root; its cgroup's cpu.stat counts the
  // throttling.
  auto consider = [&](const std::string& dir, std::optional<double> limit) {
    if (!limit) return;
    if (!k.cgroup_limit || *limit < *k.cgroup_limit) {
      k.cgroup_limit = limit;
      k.cgroup_cpu_stat = dir + "/cpu.stat";
    }
  };
  auto ancestors = [](std::string path) {
    std::vector<std::string> out;
    while (!path.empty() && path != "/") {
      out.push_back(path);
      path = path.substr(0, path.rfind('/'));
    }
    out.emplace_back("");
    return out;
  };
  if (paths.v1_cpu) {
    for (const char* mount : kV1CpuMounts) {
      if (!fs_.IsDir(mount)) continue;
      for (const std::string& rel : ancestors(*paths.v1_cpu)) {
        const std::string dir = std::string(mount) + rel;
        auto q = fs_.ReadPrefix(dir + "/cpu.cfs_quota_us", 64);
        auto per = fs_.ReadPrefix(dir + "/cpu.cfs_period_us", 64);
        if (q && per) consider(dir, CpuLimitV1(*q, *per));
      }
      if (k.cgroup_cpu_stat.empty()) k.cgroup_cpu_stat = std::string(mount) + *paths.v1_cpu + "/cpu.stat";
      return;
    }
  }
  if (paths.v2) {
    const std::string base = "/sys/fs/cgroup";
    for (const std::string& rel : ancestors(*paths.v2)) {
      if (auto max = fs_.ReadPrefix(base + rel + "/cpu.max", 256)) consider(base + rel, ParseCpuMax(*max));
    }
    if (k.cgroup_cpu_stat.empty()) k.cgroup_cpu_stat = base + *paths.v2 + "/cpu.stat";
  }
}

void HostSampler::ReadCgroupThrottle(Known& k, HostProcess& p) const {
  p.cgroup_cpu_limit = k.cgroup_limit;
  if (k.cgroup_cpu_stat.empty()) return;
  auto text = fs_.ReadPrefix(k.cgroup_cpu_stat, kSmallMax);
  if (!text) return;
  CpuThrottle now = ParseCpuStat(*text);
  if (k.throttle && now.nr_throttled && k.throttle->nr_throttled &&
      *now.nr_throttled >= *k.throttle->nr_throttled)
    p.cgroup_nr_throttled = *now.nr_throttled - *k.throttle->nr_throttled;
  if (k.throttle && now.throttled_us && k.throttle->throttled_us &&
      *now.throttled_us >= *k.throttle->throttled_us)
    p.cgroup_throttled_ms = static_cast<double>(*now.throttled_us - *k.throttle->throttled_us) / 1000.0;
  k.throttle = now;
}

void HostSampler::ReadThreads(unsigned pid, HostProcess& p, long long time_ms) {
  const std::string dir = ProcPath(pid, "task");
  size_t n = 0;
  for (const std::string& name : fs_.List(dir)) {
    auto tid = ParsePid(name);
    if (!tid || ++n > kMaxThreads) break;
    auto text = fs_.ReadPrefix(dir + "/" + name + "/stat", kStatMax);
    auto st = text ? ParseTaskStat(*text) : std::nullopt;
    if (!st) continue;
    HostThread t;
    t.tid = *tid;
    t.comm = ReplaceInvalidUtf8(st->comm);  // names are bytes; the record is UTF-8 (as replayed)
    t.state = st->state;
    const uint64_t ticks = st->utime + st->stime;
    auto it = thread_ticks_.find(*tid);
    if (it != thread_ticks_.end() && ticks >= it->second.ticks)
      t.cpu_pct = CpuPct(ticks - it->second.ticks, time_ms - it->second.at_ms);
    thread_ticks_[*tid] = {ticks, time_ms};
    p.threads.push_back(std::move(t));
  }
}

// The GPU processes and their descendants, breadth-first from the GPU processes: a descendant carries the
// GPU indexes of its GPU ancestors. `is_root` marks the GPU processes.
std::map<unsigned, std::vector<unsigned>> HostSampler::GpuFamily(
    const std::set<unsigned>& roots, const std::map<unsigned, std::vector<unsigned>>& gpu_pids,
    std::map<unsigned, bool>& is_root) const {
  std::map<unsigned, std::vector<unsigned>> member;  // pid -> gpus
  std::deque<unsigned> queue;
  for (unsigned r : roots) {
    member[r] = gpu_pids.at(r);
    is_root[r] = true;
    queue.push_back(r);
  }
  while (!queue.empty() && member.size() < kMaxDescendants) {
    const unsigned pid = queue.front();
    queue.pop_front();
    auto c = children_.find(pid);
    if (c == children_.end()) continue;
    for (unsigned child : c->second) {
      auto& g = member[child];
      const bool fresh = g.empty() && !is_root.count(child);
      for (unsigned idx : member[pid])
        if (std::find(g.begin(), g.end(), idx) == g.end()) g.push_back(idx);
      if (fresh) queue.push_back(child);
    }
  }
  return member;
}

// A GPU process's main thread (the one whose id is the PID): its CPU since the previous tick, where the
// process was seen then (`had`).
void HostSampler::ReadMainThread(unsigned pid, bool had, long long since, Known& k, HostProcess& p) const {
  auto main =
      fs_.ReadPrefix("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/stat", kStatMax);
  auto ms = main ? ParseTaskStat(*main) : std::nullopt;
  if (!ms) return;
  const uint64_t mt = ms->utime + ms->stime;
  if (had && k.have_main && mt >= k.main_ticks) p.main_thread_cpu_pct = CpuPct(mt - k.main_ticks, since);
  k.main_ticks = mt;
  k.have_main = true;
}

// One process of the family from its /proc/PID/stat: its role, CPU since the previous tick, and the static
// facts and cgroup throttling that matter for its role; `k` is what is remembered about it, updated.
HostProcess HostSampler::ReadProcess(unsigned pid, const TaskStat& st, const std::vector<unsigned>& gpus,
                                     bool root, Known& k, long long time_ms) const {
  HostProcess p;
  p.pid = pid;
  p.ppid = st.ppid;
  p.comm = ReplaceInvalidUtf8(st.comm);
  p.state = st.state;
  p.gpus = gpus;
  std::sort(p.gpus.begin(), p.gpus.end());
  p.role = root                           ? ProcessRole::kGpu
           : st.comm == kLoaderWorkerName ? ProcessRole::kLoader
                                          : ProcessRole::kChild;
  const uint64_t ticks = st.utime + st.stime;
  const long long since = time_ms - k.at_ms;
  if (k.have && ticks >= k.cpu_ticks) p.cpu_pct = CpuPct(ticks - k.cpu_ticks, since);
  const bool had = k.have;
  k.cpu_ticks = ticks;
  k.at_ms = time_ms;
  k.have = true;
  // Allowed CPUs matter for the GPU processes and their loaders, the cgroup for the GPU processes
  // (their workers share it): other descendants cost one stat read per tick.
  if (p.role != ProcessRole::kChild && (k.static_at_ms < 0 || time_ms - k.static_at_ms >= opt_.rescan_ms))
    ReadStatic(pid, k, time_ms, p.role == ProcessRole::kGpu);
  p.cpus_allowed = k.cpus_allowed;
  if (p.role == ProcessRole::kGpu) {
    ReadMainThread(pid, had, since, k, p);
    ReadCgroupThrottle(k, p);
  }
  return p;
}

// Forgets the threads that were not seen in this reading.
void HostSampler::ForgetThreads(const HostSample& out) {
  std::set<unsigned> seen;
  for (const HostProcess& p : out.processes)
    for (const HostThread& t : p.threads) seen.insert(t.tid);
  for (auto it = thread_ticks_.begin(); it != thread_ticks_.end();)
    it = seen.count(it->first) ? std::next(it) : thread_ticks_.erase(it);
}

HostSample HostSampler::Sample(long long time_ms, const std::map<unsigned, std::vector<unsigned>>& gpu_pids) {
  HostSample out;
  ReadCpus(out);
  ReadPressure(out);

  std::set<unsigned> roots;
  for (const auto& [pid, gpus] : gpu_pids) {
    if (PidVisible(pid))
      roots.insert(pid);
    else
      out.unattributed_pids.push_back(pid);
  }
  if (!roots.empty() &&
      (roots != scanned_roots_ || scanned_at_ms_ < 0 || time_ms - scanned_at_ms_ >= opt_.rescan_ms)) {
    Rescan(roots);
    scanned_at_ms_ = time_ms;
  }
  const bool read_threads = threads_at_ms_ < 0 || time_ms - threads_at_ms_ >= opt_.threads_ms;
  if (read_threads) threads_at_ms_ = time_ms;

  std::map<unsigned, bool> is_root;
  const std::map<unsigned, std::vector<unsigned>> member = GpuFamily(roots, gpu_pids, is_root);
  std::map<unsigned, Known> next;
  for (const auto& [pid, gpus] : member) {
    auto text = fs_.ReadPrefix(ProcPath(pid, "stat"), kStatMax);
    auto st = text ? ParseTaskStat(*text) : std::nullopt;
    if (!st) continue;  // gone since the scan
    Known k = known_.count(pid) ? known_[pid] : Known{};
    HostProcess p = ReadProcess(pid, *st, gpus, is_root.count(pid) > 0, k, time_ms);
    if (read_threads && p.role != ProcessRole::kChild) ReadThreads(pid, p, time_ms);
    next[pid] = std::move(k);
    out.processes.push_back(std::move(p));
  }
  known_ = std::move(next);
  if (read_threads) ForgetThreads(out);
  return out;
}

}  // namespace gp::watch
