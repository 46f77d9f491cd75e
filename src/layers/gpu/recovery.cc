// The driver's own recovery verdict, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvmlDeviceGpuRecoveryAction_t in
// NVIDIA's nvml.h; public copy github.com/NVIDIA/go-nvml gen/nvml/nvml.h), and the reset fix that accounts
// for persistence mode. The actions follow NVIDIA's A100 GPU memory error management guide, "Error Recovery
// and Response Flags" (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/): none, reset the GPU, reboot the
// node, drain peer-to-peer traffic and read again, drain and reset; nvml.h of CUDA 13.3 adds 5, recover the
// IMEX domain (NVIDIA's nvidia-ml-py bindings named 5 GPU_RESET_BUS before).
#include "layers/gpu/health.h"

namespace gp::layers {
namespace {

constexpr unsigned kActionNone = 0;
constexpr unsigned kActionGpuReset = 1;
constexpr unsigned kActionNodeReboot = 2;
constexpr unsigned kActionDrainP2p = 3;
constexpr unsigned kActionDrainAndReset = 4;
constexpr unsigned kActionRecoverImex = 5;

std::string ResetCommand(const probe::HostFacts& host, const probe::Gpu& g) {
  const std::string i = std::to_string(g.index);
  if (HeldByPersistence(host, g))
    return "sudo systemctl stop nvidia-persistenced && sudo nvidia-smi -r -i " + i +
           " && sudo systemctl start nvidia-persistenced (a GPU held by persistence mode refuses the reset)";
  return "sudo nvidia-smi -r -i " + i;
}

using Action = RecoveryVerdict;

std::optional<Action> ActionFor(const probe::HostFacts& host, const probe::Gpu& g) {
  if (!g.health.recovery_action) return std::nullopt;
  const std::string who = GpuLabel(g), i = std::to_string(g.index);
  switch (*g.health.recovery_action) {
    case kActionGpuReset:
      return Action{Status::kFail,
                    "the driver asks for a reset of " + who + " (NVML recovery action: GPU reset)",
                    ResetFix(host, g)};
    case kActionNodeReboot:
      return Action{
          Status::kFail,
          "the driver asks for a reboot of the node for " + who + " (NVML recovery action: node reboot)",
          "drain the node, then sudo reboot"};
    case kActionDrainP2p:
      return Action{
          Status::kFail,
          "the driver asks to stop peer-to-peer traffic on " + who +
              " before it can say more (NVML recovery action: drain P2P)",
          "stop the jobs that use GPU " + i +
              "'s peer-to-peer or NVLink traffic, then run gpuprep doctor again to read the driver's "
              "next action"};
    case kActionDrainAndReset:
      return Action{
          Status::kWarn,
          who +
              " runs at reduced capacity; the driver asks to drain and reset it (NVML recovery action: "
              "drain and reset)",
          "schedule no new work on GPU " + i + ", let its jobs reach a checkpoint, then stop them and " +
              ResetCommand(host, g)};
    case kActionRecoverImex:
      return Action{
          Status::kFail,
          "the driver asks to recover the IMEX domain of " + who +
              " (NVML recovery action: recover IMEX domain)",
          "restart the IMEX daemon on every node of the domain (sudo systemctl restart nvidia-imex), "
          "then run gpuprep doctor again"};
    default:
      return std::nullopt;
  }
}

}  // namespace

bool HeldByPersistence(const probe::HostFacts& host, const probe::Gpu& g) {
  return g.health.persistence.value_or(host.driver.persistenced_enabled || host.driver.persistenced_running);
}

std::string ResetFix(const probe::HostFacts& host, const probe::Gpu& g) {
  return "stop the jobs on GPU " + std::to_string(g.index) + ", then " + ResetCommand(host, g);
}

std::optional<std::string> RecoveryFix(const probe::HostFacts& host, const probe::Gpu& g) {
  auto a = ActionFor(host, g);
  return a ? std::optional<std::string>(a->fix) : std::nullopt;
}

std::string FixFor(const probe::HostFacts& host, const probe::Gpu& g, const std::string& fix) {
  return RecoveryFix(host, g).value_or(fix);
}

std::optional<RecoveryVerdict> RecoveryFor(const probe::HostFacts& host, const probe::Gpu& g) {
  if (!g.health.recovery_action || *g.health.recovery_action == kActionNone) return std::nullopt;
  return ActionFor(host, g);
}

}  // namespace gp::layers
