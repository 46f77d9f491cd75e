#include "accept/gate.h"

#include "util/input.h"
#include "util/strings.h"

namespace gp::accept {

std::vector<std::string> GateLayers(const std::string& runtime) {
  std::vector<std::string> layers{"gpu", "driver", "fabricmanager"};
  if (runtime == "container") {
    layers.emplace_back("docker");
    layers.emplace_back("container_toolkit");
  }
  return layers;
}

std::optional<GateFailure> CheckGate(const std::vector<verdict::LayerReport>& reports,
                                     const std::string& runtime) {
  for (const auto& name : GateLayers(runtime)) {
    const verdict::LayerReport* found = nullptr;
    for (const auto& r : reports)
      if (r.name == name) found = &r;
    // gpu and driver apply to every host; a layer doctor does not show for this host does not apply to it
    // (fabricmanager without NVSwitches: a real one-GPU H200 machine was refused here).
    if (!found && (name == "gpu" || name == "driver"))
      return GateFailure{name, "doctor did not check this layer"};
    if (!found) continue;
    if (found->status == verdict::Status::kFail) return GateFailure{name, found->detail};
  }
  return std::nullopt;
}

std::optional<GateFailure> CheckHostTorch(sys::CommandRunner& runner, int nvml_gpus,
                                          std::chrono::milliseconds timeout) {
  const std::string what = "python3 -c 'import torch'";
  sys::Command cmd;
  cmd.argv = {"python3", "-c", "import torch; print(torch.cuda.device_count())"};
  cmd.timeout = timeout;
  cmd.max_output = kTorchOutputMax;
  const sys::CommandResult res = runner.Run(cmd);
  auto fail = [](const std::string& detail) { return GateFailure{"torch", detail}; };
  if (res.not_found) return fail("python3 is not on PATH");
  if (res.timed_out)
    return fail(what + " did not finish in " +
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s");
  if (res.truncated) return fail(what + " printed more than " + std::to_string(kTorchOutputMax) + " bytes");
  if (res.exit_code != 0) {
    const std::string last = TerminalSafe(LastLine(res.err.empty() ? res.out : res.err));
    return fail(what + " failed (exit " + std::to_string(res.exit_code) + ")" +
                (last.empty() ? "" : ": " + last.substr(0, 300)));
  }
  const auto count = ParseUnsigned(LastLine(res.out));
  if (!count || *count > 1024) return fail(what + " printed no GPU count");
  if (static_cast<int>(*count) != nvml_gpus)
    return fail("torch sees " + std::to_string(*count) + " GPUs, NVML " + std::to_string(nvml_gpus));
  return std::nullopt;
}

}  // namespace gp::accept
