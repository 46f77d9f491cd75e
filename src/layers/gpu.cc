// gpu layer: NVIDIA GPUs on the PCI bus (no driver needed), each known to the catalogue and of an
// architecture the stack supports.
#include <algorithm>

#include "layers/check.h"
#include "layers/rules.h"
#include "util/strings.h"

namespace gp::layers {

LayerReport CheckGpu(const CheckInput& in) {
  LayerReport r;
  r.name = "gpu";
  r.wanted = in.stack.architectures.empty() ? "an NVIDIA GPU" : Join(in.stack.architectures, ", ");
  const auto& gpus = in.host.gpus;
  if (gpus.empty()) {
    r.Add("gpu.none", Status::kFail, "no NVIDIA GPU found on the PCI bus",
          "run on a host with an NVIDIA GPU (check with: lspci -d 10de:)");
    return r;
  }
  // found: "8x H100 80GB HBM3" (grouped by name, in host order)
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& g : gpus) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == g.name; });
    if (it == counts.end())
      counts.push_back({g.name, 1});
    else
      ++it->second;
  }
  std::vector<std::string> parts;
  parts.reserve(counts.size());
  for (const auto& [name, n] : counts) parts.push_back(std::to_string(n) + "x " + name);
  r.found = Join(parts, ", ");

  std::vector<std::string> unsupported;
  for (const auto& g : gpus) {
    const manifest::GpuModel* m = GpuModelOf(in.compat, g);
    if (!m) {
      r.Add("gpu.unknown-model", Status::kWarn,
            "GPU " + std::to_string(g.index) + " (" + g.pci + ", device " + g.device_id +
                ") is not in gpuprep's catalogue: its driver and CUDA needs cannot be checked",
            "check NVIDIA's support for device " + g.device_id + " and add it to manifests/compat.yaml");
      continue;
    }
    const auto& archs = in.stack.architectures;
    if (!archs.empty() && std::find(archs.begin(), archs.end(), m->arch) == archs.end() &&
        std::find(unsupported.begin(), unsupported.end(), m->arch) == unsupported.end())
      unsupported.push_back(m->arch);
  }
  for (const auto& arch : unsupported) {
    r.Add("gpu.stack-arch", Status::kWarn,
          "stack " + in.stack.name + " is not made for " + arch + " GPUs (it lists " + r.wanted + ")",
          "choose a stack for " + arch + ": gpuprep manifest list");
  }
  if (r.findings.empty())
    r.Add("gpu.found", Status::kOk, std::to_string(gpus.size()) + " GPU" + (gpus.size() == 1 ? "" : "s") + " found");
  return r;
}

}  // namespace gp::layers
