#include "sys/nvml_processes.h"

#include <climits>
#include <cstring>

#include "sys/nvml_abi.h"

namespace gp::sys {
namespace {

constexpr unsigned kPidMaxLimit = 1u << 22;  // PID_MAX_LIMIT on 64-bit Linux (include/linux/threads.h)
constexpr unsigned kNoInstance = 0xFFFFFFFFu;
constexpr unsigned kMaxInstanceId = 64;  // far above any MIG profile's instance count

struct Raw {
  unsigned pid = 0;
  unsigned long long used = 0;
  unsigned gi = kNoInstance, ci = kNoInstance;
};

Raw At(const std::vector<uint8_t>& buf, size_t stride, size_t i) {
  Raw r;
  const size_t off = stride * i;
  std::memcpy(&r.pid, buf.data() + off, sizeof r.pid);
  std::memcpy(&r.used, buf.data() + off + 8, sizeof r.used);
  if (stride >= 24) {
    std::memcpy(&r.gi, buf.data() + off + 16, sizeof r.gi);
    std::memcpy(&r.ci, buf.data() + off + 20, sizeof r.ci);
  }
  return r;
}

bool Plausible(const Raw& r, uint64_t memory_total) {
  if (r.pid == 0 || r.pid > kPidMaxLimit) return false;
  if (r.used != ULLONG_MAX && memory_total > 0 && r.used > memory_total) return false;
  auto instance_ok = [](unsigned id) { return id == kNoInstance || id < kMaxInstanceId; };
  return instance_ok(r.gi) && instance_ok(r.ci);
}

NvmlProcess ToProcess(const Raw& r) {
  NvmlProcess p;
  p.pid = r.pid;
  if (r.used != ULLONG_MAX) p.used_bytes = r.used;
  if (r.gi != kNoInstance) p.gpu_instance_id = r.gi;
  return p;
}

}  // namespace

DecodedProcesses DecodeProcesses(const std::vector<uint8_t>& buffer, unsigned count, uint64_t memory_total,
                                 const std::function<bool(unsigned)>& pid_visible) {
  static constexpr size_t kStrides[] = {sizeof(nvml::ProcessInfo), 32, 16};
  DecodedProcesses best;
  int best_visible = -1;
  for (size_t stride : kStrides) {
    if (static_cast<size_t>(count) * stride > buffer.size()) continue;
    bool all_plausible = true;
    int visible = 0;
    std::vector<NvmlProcess> out;
    for (size_t i = 0; i < count && all_plausible; ++i) {
      Raw r = At(buffer, stride, i);
      all_plausible = Plausible(r, memory_total);
      if (all_plausible && pid_visible && pid_visible(r.pid)) ++visible;
      out.push_back(ToProcess(r));
    }
    if (!all_plausible || visible <= best_visible) continue;
    best = {stride, std::move(out)};
    best_visible = visible;
  }
  if (best_visible >= 0) return best;
  best.stride = sizeof(nvml::ProcessInfo);
  for (size_t i = 0; i < count && (i + 1) * best.stride <= buffer.size(); ++i) {
    Raw r = At(buffer, best.stride, i);
    if (r.pid != 0) best.processes.push_back(ToProcess(r));
  }
  return best;
}

}  // namespace gp::sys
