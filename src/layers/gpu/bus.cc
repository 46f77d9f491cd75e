// gpu layer, each GPU function on the bus: its config space, its driver, NVML's answer for its bus id, and
// its PCIe link. NVIDIA's action for a GPU that fell off the bus (Xid 79) is a restart of the node; the
// issue's other evidence: docs.nvidia.com/deploy/xid-errors (Xid 79), nvml.h (NVML_ERROR_GPU_IS_LOST,
// NVML_ERROR_RESET_REQUIRED).
#include <algorithm>
#include <sstream>

#include "layers/gpu/health.h"
#include "util/health_codes.h"
#include "util/strings.h"

namespace gp::layers {
namespace {

const char* const kFellOffFix =
    "sudo reboot (NVIDIA's action for a GPU that fell off the bus, Xid 79: restart the node); if it falls "
    "off "
    "again, drain the node and report the board to the provider";
constexpr int kNvmlNotFound = 6;        // NVML_ERROR_NOT_FOUND
constexpr int kNvmlGpuIsLost = 15;      // NVML_ERROR_GPU_IS_LOST
constexpr int kNvmlResetRequired = 16;  // NVML_ERROR_RESET_REQUIRED

std::string Gts(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string LinkFix(const probe::Gpu& g) {
  return "sudo reboot retrains the link; if it comes up degraded again, reseat the GPU or its riser, or "
         "report "
         "the slot to the provider (check: sudo lspci -vv -s " +
         g.pci + " | grep LnkSta)";
}

// True when NVML answered for some GPU: then its silence about one is evidence; without it (--root, no
// driver), a GPU bound to nothing among GPUs bound to nvidia is the sign left of a fall.
bool NvmlAsked(const probe::HostFacts& h) {
  return std::any_of(h.gpus.begin(), h.gpus.end(),
                     [](const probe::Gpu& g) { return g.nvml_status.has_value(); });
}

void CheckPresence(const probe::HostFacts& h, const probe::Gpu& g, bool nvml, bool others_bound,
                   LayerReport& r) {
  const std::string who = GpuLabel(g);
  if (g.config_all_ones) {
    r.Add("gpu.off-bus", Status::kFail, who + " is off the bus: its PCI config space reads all ones",
          FixFor(h, g, kFellOffFix));
    return;
  }
  if (g.driver == "vfio-pci") return;  // passed to a virtual machine on purpose
  if (nvml && g.nvml_status == kNvmlNotFound)
    r.Add("gpu.not-in-nvml", Status::kFail,
          who + " is on the PCI bus but NVML does not know it (NVML_ERROR_NOT_FOUND)", kFellOffFix);
  else if (g.nvml_status == kNvmlGpuIsLost)
    r.Add(
        health_codes::kGpuLost, Status::kFail,
        who + " is lost: NVML answers NVML_ERROR_GPU_IS_LOST (fallen off the bus or otherwise inaccessible)",
        FixFor(h, g, kFellOffFix));
  else if (g.nvml_status == kNvmlResetRequired)
    r.Add("gpu.reset-required", Status::kFail,
          who + " needs a reset before it can be used again: NVML answers NVML_ERROR_RESET_REQUIRED",
          FixFor(h, g, ResetFix(h, g)));
  else if (!nvml && g.driver.empty() && others_bound)
    r.Add(
        "gpu.unbound", Status::kWarn,
        who +
            " is bound to no driver while the others are bound to nvidia: the driver unbinds a GPU that "
            "fell off the bus",
        "look for Xid 79 in the kernel log (sudo journalctl -k | grep -i xid), then sudo reboot; if it stays "
        "unbound, report the board to the provider");
}

// Width below the maximum counts at any time. Speed counts only in P0 (an idle GPU drops its link to save
// power), against the lower of the GPU's and its port's maximum (a Gen5 GPU in a Gen4 slot is not degraded).
// Returns whether the speed could not be judged for want of a performance state.
bool CheckLink(const probe::HostFacts& h, const probe::Gpu& g, LayerReport& r) {
  const probe::PcieLink& l = g.pcie;
  if (l.width && l.max_width && *l.width < *l.max_width)
    r.Add("gpu.pcie-width", Status::kWarn,
          GpuLabel(g) + " PCIe link runs at x" + std::to_string(*l.width) + " of its x" +
              std::to_string(*l.max_width),
          FixFor(h, g, LinkFix(g)));
  if (!l.speed || !l.max_speed) return false;
  if (!g.health.pstate) return true;
  const double allowed = l.port_max_speed ? std::min(*l.max_speed, *l.port_max_speed) : *l.max_speed;
  if (*g.health.pstate == 0 && *l.speed < allowed)
    r.Add("gpu.pcie-speed", Status::kWarn,
          GpuLabel(g) + " PCIe link runs at " + Gts(*l.speed) + " GT/s in P0, below the " + Gts(allowed) +
              " GT/s its slot allows",
          FixFor(h, g, LinkFix(g)));
  return false;
}

}  // namespace

std::string GpuLabel(const probe::Gpu& g) { return "GPU " + std::to_string(g.index) + " (" + g.pci + ")"; }

void MarkGpu(LayerReport& r, size_t from, const probe::Gpu& g) {
  for (size_t i = from; i < r.findings.size(); ++i) r.findings[i].gpu_pci = g.pci;
}

void CheckGpuBus(const CheckInput& in, LayerReport& r) {
  const probe::HostFacts& h = in.host;
  const bool nvml = NvmlAsked(h);
  const bool others_bound =
      std::any_of(h.gpus.begin(), h.gpus.end(), [](const probe::Gpu& g) { return g.driver == "nvidia"; });
  bool not_judged = false;
  for (const auto& g : h.gpus) {
    const size_t from = r.findings.size();
    CheckPresence(h, g, nvml, others_bound, r);
    if (!g.config_all_ones) not_judged = CheckLink(h, g, r) || not_judged;
    MarkGpu(r, from, g);
  }
  if (not_judged)
    r.Add("gpu.pcie-speed-not-judged", Status::kSkip,
          "PCIe link speed not judged: no performance state (a GPU's link slows down when it idles)");
}

}  // namespace gp::layers
