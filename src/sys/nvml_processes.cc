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
  // The strides under which every entry is plausible, in order of preference.
  std::vector<DecodedProcesses> plausible;
  for (size_t stride : kStrides) {
    if (static_cast<size_t>(count) * stride > buffer.size()) continue;
    DecodedProcesses d{stride, {}};
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i) {
      Raw r = At(buffer, stride, i);
      ok = Plausible(r, memory_total);
      d.processes.push_back(ToProcess(r));
    }
    if (ok) plausible.push_back(std::move(d));
  }
  // One entry reads the same under every stride; with one plausible stride /proc need not be asked.
  if (count <= 1 && !plausible.empty()) return std::move(plausible.front());
  if (plausible.size() == 1 || (!plausible.empty() && !pid_visible)) return std::move(plausible.front());
  int best_visible = -1;
  size_t best = 0;
  for (size_t k = 0; k < plausible.size(); ++k) {
    int visible = 0;
    for (const NvmlProcess& p : plausible[k].processes) visible += pid_visible(p.pid) ? 1 : 0;
    if (visible > best_visible) {
      best_visible = visible;
      best = k;
    }
  }
  if (!plausible.empty()) return std::move(plausible[best]);
  DecodedProcesses fallback{sizeof(nvml::ProcessInfo), {}};
  for (size_t i = 0; i < count && (i + 1) * fallback.stride <= buffer.size(); ++i) {
    Raw r = At(buffer, fallback.stride, i);
    if (r.pid != 0) fallback.processes.push_back(ToProcess(r));
  }
  return fallback;
}

}  // namespace gp::sys
