// gpu layer: NVIDIA GPUs on the PCI bus (no driver needed), each known to the catalogue and of an
// architecture the stack supports, each present and healthy (layers/gpu/health.h).
#include "layers/check.h"

#include <algorithm>

#include "layers/driver/driver.h"
#include "layers/gpu/health.h"
#include "layers/table.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

// "8x H100 80GB HBM3" (grouped by name, in host order).
std::string GpusFound(const std::vector<probe::Gpu>& gpus) {
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
  return Join(parts, ", ");
}

bool OnlySkips(const LayerReport& r) {
  return std::none_of(r.findings.begin(), r.findings.end(),
                      [](const Finding& f) { return f.status != Status::kSkip; });
}

std::string GpusWord(size_t n) { return std::to_string(n) + " GPU" + (n == 1 ? "" : "s"); }

// The gpu report's start: gpu.none when the bus has no NVIDIA GPU (false: nothing more to check), else
// the GPUs found.
bool StartGpuReport(const CheckInput& in, const std::string& wanted, LayerReport& r) {
  r.name = "gpu";
  r.wanted = wanted;
  if (in.host.gpus.empty()) {
    r.Add("gpu.none", Status::kFail, "no NVIDIA GPU found on the PCI bus",
          "run on a host with an NVIDIA GPU (check with: lspci -d 10de:)");
    return false;
  }
  r.found = GpusFound(in.host.gpus);
  return true;
}

// The gpu report's health half (doctor and doctor --health alike): bus, memory, clocks, NVLink, then the
// found row when nothing else spoke, then the Xid history.
void FinishGpuReport(const CheckInput& in, LayerReport& r) {
  CheckGpuBus(in, r);
  CheckGpuHealth(in, r);
  if (OnlySkips(r)) r.Add("gpu.found", Status::kOk, GpusWord(in.host.gpus.size()) + " found");
  CheckXidHistory(in, r);
}

}  // namespace

LayerReport CheckGpu(const CheckInput& in) {
  LayerReport r;
  if (!StartGpuReport(
          in, in.stack.architectures.empty() ? "an NVIDIA GPU" : Join(in.stack.architectures, ", "), r))
    return r;
  const auto& gpus = in.host.gpus;

  const manifest::DriverSpec& d = in.stack.driver;
  const bool open = d.flavour == "open" || d.flavour == "server-open";
  std::optional<int> cuda_major;
  if (in.stack.cuda.enabled && in.stack.cuda.version.known())
    cuda_major = static_cast<int>(in.stack.cuda.version.version->major());
  std::vector<const manifest::GpuModel*> seen;
  for (const auto& g : gpus) {
    const manifest::GpuModel* m = GpuModelOf(in.compat, g);
    if (!m) {
      r.Add("gpu.unknown-model", Status::kWarn,
            "GPU " + std::to_string(g.index) + " (" + g.pci + ", device " + g.device_id +
                ") is not in gpuprep's catalogue: its driver and CUDA needs cannot be checked",
            "check NVIDIA's support for device " + g.device_id + " and add it to manifests/compat.yaml");
      continue;
    }
    if (std::find(seen.begin(), seen.end(), m) != seen.end()) continue;
    seen.push_back(m);
    // The stack's own pins against the board's rules (compat.yaml driver_rules): a stack that cannot run here
    // fails, one that merely does not claim the board warns; both name the newest embedded stack that can.
    std::string why = d.version.known() ? m->StackCannotRun(*d.version.version, open, cuda_major) : "";
    if (why.empty() && in.stack.Claims(*m)) continue;
    const std::string newest = NewestStackFor(in.compat, in.host);
    const std::string fix = newest.empty()
                                ? "no embedded stack can; write a site stack (gpuprep manifest list)"
                                : "sudo gpuprep apply --yes --manifest " + newest;
    const std::string tail =
        newest.empty() ? "; no embedded stack can" : "; the newest that can is " + newest;
    if (!why.empty())
      r.Add("gpu.stack-cannot-run", Status::kFail,
            "stack " + in.stack.name + " cannot run here: " + why + tail, fix);
    else
      r.Add("gpu.stack-arch", Status::kWarn,
            "stack " + in.stack.name + " is not made for " + m->name + " (" + m->arch + "; it claims " +
                r.wanted + (in.stack.boards_excluded.empty() ? "" : " less its boards_excluded") + ")" + tail,
            fix);
  }
  FinishGpuReport(in, r);
  return r;
}

std::vector<LayerReport> CheckHealthOnly(const CheckInput& in) {
  LayerReport gpu;
  if (!StartGpuReport(in, "every GPU healthy", gpu)) return {gpu};
  FinishGpuReport(in, gpu);
  return {gpu, DriverHealth(in)};
}

extern const Layer kGpuLayer = {"gpu", CheckGpu, nullptr, nullptr, nullptr, nullptr};

}  // namespace gp::layers
