// The verdict names scripts switch on, and the standard fix for each (docs/watch.md, "Verdicts").
#include "watch/verdict.h"

#include <algorithm>
#include <string>
#include <vector>

#include "util/health_codes.h"
#include "watch/rules.h"

namespace gp::watch {

const char* VerdictName(VerdictKind k) {
  switch (k) {
    case VerdictKind::kIdle:
      return "idle";
    case VerdictKind::kIdleMemoryHeld:
      return "idle_memory_held";
    case VerdictKind::kInputBound:
      return "input_bound";
    case VerdictKind::kLaunchOrSmallBatch:
      return "launch_or_small_batch";
    case VerdictKind::kCommunicationBound:
      return "communication_bound";
    case VerdictKind::kHungCollective:
      return "hung_collective";
    case VerdictKind::kThrottled:
      return "throttled";
    case VerdictKind::kHealthy:
      return "healthy";
    case VerdictKind::kActivityUnknown:
      return "activity_unknown";
    case VerdictKind::kUnclassified:
      return "unclassified";
  }
  return "";
}

std::optional<VerdictKind> VerdictFromName(const std::string& name) {
  for (int i = 0; i < kVerdictKinds; ++i)
    if (name == VerdictName(static_cast<VerdictKind>(i))) return static_cast<VerdictKind>(i);
  return std::nullopt;
}

const char* ConfidenceName(Confidence c) {
  switch (c) {
    case Confidence::kHigh:
      return "high";
    case Confidence::kMedium:
      return "medium";
    case Confidence::kLow:
      return "low";
  }
  return "";
}

std::vector<std::string> HealthCodesOf(const std::vector<std::string>& reasons) {
  auto has = [&](const char* r) { return std::find(reasons.begin(), reasons.end(), r) != reasons.end(); };
  std::vector<std::string> out;
  if (has("hw_power_brake_slowdown")) out.emplace_back(health_codes::kClocksPowerBrake);
  if (has("hw_thermal_slowdown") || has("sw_thermal_slowdown"))
    out.emplace_back(health_codes::kClocksThermal);
  if (has("hw_slowdown") && !has("hw_power_brake_slowdown") && !has("hw_thermal_slowdown"))
    out.emplace_back(health_codes::kClocksHwSlowdown);
  return out;
}

namespace {

// The fix for a throttled GPU: one sentence per reason it was throttled for, in the reasons' order.
std::string FixForThrottled(const std::vector<std::string>& reasons) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  for (const std::string& r : reasons) {
    if (r == "hw_thermal_slowdown" || r == "sw_thermal_slowdown")
      add("The GPU is held down by heat: check airflow, fans, inlet temperature and the heatsink.");
    else if (r == "hw_power_brake_slowdown")
      add("The power brake was asserted from outside the GPU (e.g. by the system power supply): check "
          "the "
          "PSUs and the server's power policy in its BMC.");
    else if (r == "hw_slowdown")
      add("Hardware slowdown (heat, power brake or power protection) held the clocks at half or less: "
          "check "
          "cooling and power delivery, and the kernel log for Xid errors.");
    else if (r == "power_limit_below_default")
      add("The enforced power limit is below the board's default: restore it (nvidia-smi -pl) or ask the "
          "provider why it is capped.");
    else if (r == "sw_power_cap_below_limit")
      add("The software power cap holds the clocks while the GPU draws well under its limit: check for "
          "an "
          "out-of-band power limit (BMC, datacenter policy).");
  }
  return out.empty() ? "Check cooling and power delivery." : out;
}

}  // namespace

std::string FixFor(VerdictKind kind, const std::vector<std::string>& reasons) {
  switch (kind) {
    case VerdictKind::kIdle:
      return "Nothing runs on this GPU: give it work or release it (stop the instance, shrink the "
             "allocation).";
    case VerdictKind::kIdleMemoryHeld:
      return "A process holds GPU memory but runs no kernels (a job that did not exit, a stuck rank, an open "
             "notebook): end it (the PIDs are in the evidence) or free the GPU.";
    case VerdictKind::kInputBound:
      return "The input pipeline cannot keep the GPU fed: raise the DataLoader's num_workers (PyTorch's "
             "performance tuning guide: num_workers > 0, pin_memory=True), give the job more CPUs (affinity, "
             "cgroup quota), keep workers with persistent_workers=True, cache the data or move it to faster "
             "storage, or decode on the GPU.";
    case VerdictKind::kLaunchOrSmallBatch:
      return "The GPU runs too little work per kernel or waits on the CPU to launch it: raise the "
             "(micro)batch "
             "size or accumulate gradients, fuse operators (e.g. torch.compile), and capture CUDA Graphs for "
             "launch-bound steps.";
    case VerdictKind::kCommunicationBound:
      return "Collectives dominate the step: overlap communication with compute (DDP bucket size, FSDP "
             "prefetch), do more work per all-reduce (larger per-GPU batch, gradient accumulation), and "
             "check "
             "the topology (nvidia-smi topo -m) and NCCL's chosen transport (NCCL_DEBUG=INFO).";
    case VerdictKind::kHungCollective:
      return "The ranks spin in a collective waiting for one that does not arrive (GPU-Util reads 100% while "
             "they wait): inspect the straggler's process (e.g. py-spy dump --pid PID) and give the process "
             "group a timeout (torch.distributed.init_process_group(timeout=...)) so a hang fails fast.";
    case VerdictKind::kThrottled:
      return FixForThrottled(reasons);
    case VerdictKind::kHealthy:
      return "None needed.";
    case VerdictKind::kActivityUnknown:
      return "Activity cannot be seen here: on MIG without GPM use DCGM's profiling fields per instance; for "
             "late or missing answers check the driver (kernel log, Xid errors).";
    case VerdictKind::kUnclassified:
      return "No standard fix: the numbers fit no rule. The evidence names the rule that came closest and "
             "the "
             "conditions it failed; where the workload is known, --threshold moves a boundary.";
  }
  return "";
}

}  // namespace gp::watch
