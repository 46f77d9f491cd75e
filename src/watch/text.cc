#include "watch/text.h"

#include "util/health_codes.h"
#include "util/input.h"
#include "watch/cost.h"
#include "watch/duration.h"
#include "watch/jobs.h"
#include "watch/jsonl.h"

namespace gp::watch {
namespace {

std::string Clock(long long ms) { return Rfc3339(ms).substr(11, 8); }  // HH:MM:SS

std::string Gpu(const GpuId& id) {
  std::string s = "GPU " + std::to_string(id.index);
  if (!id.pci_bus_id.empty()) s += " (" + TerminalSafe(id.pci_bus_id) + ")";
  return s;
}

}  // namespace

std::string RenderVerdictText(const Verdict& v) {
  std::string out = Clock(v.start_ms) + "-" + Clock(v.end_ms) + "  " + Gpu(v.gpu);
  if (v.gpu_instance_id) out += " instance " + std::to_string(*v.gpu_instance_id);
  out += "  " + std::string(VerdictName(v.kind)) + " (" + ConfidenceName(v.confidence) + " confidence)\n";
  out += "    " + TerminalSafe(v.detail) + "\n";
  if (!v.health_codes.empty()) {
    out += "    health finding:";
    for (const std::string& c : v.health_codes) out += " " + c;
    out += "\n";
  }
  if (v.straggler_gpu) out += "    straggler: " + Gpu(*v.straggler_gpu) + "\n";
  if (v.kind != VerdictKind::kHealthy) out += "    fix: " + v.fix + "\n";
  return out;
}

std::string RenderSummaryText(const Summary& s) {
  std::string out = "summary: " + std::to_string(s.samples) + (s.samples == 1 ? " sample" : " samples") +
                    " over " + FormatDuration(std::max(0LL, s.end_ms - s.start_ms)) + " (window " +
                    FormatDuration(s.window_ms) + ", interval " + FormatDuration(s.interval_ms) + ")\n";
  if (!s.judged) out += "  not judged: " + s.reason.value_or("") + "\n";
  for (const GpuSummary& g : s.gpus) {
    out += "  " + Gpu(g.gpu) + " " + TerminalSafe(g.name) + ":";
    for (const auto& [name, n] : g.windows) out += " " + name + " " + std::to_string(n);
    if (g.windows.empty()) out += " no verdict";
    for (const LostGpu& l : s.lost_gpus)
      if (l.gpu.index == g.gpu.index) out += ", lost";
    if (g.gaps) out += ", " + std::to_string(g.gaps) + " gaps";
    out += "\n";
    for (const auto& [key, n] : g.unclassified_closest) {
      const size_t colon = key.find(':');
      out += "    unclassified, closest rule " + key.substr(0, colon) + " (failed:" + key.substr(colon + 1) +
             "): " + std::to_string(n) + "\n";
    }
  }
  for (const LostGpu& l : s.lost_gpus)
    out += "  lost: " + Gpu(l.gpu) + " " + TerminalSafe(l.gpu.uuid) + " at " + Rfc3339(l.time_ms) + " (" +
           health_codes::kGpuLost + ")\n";
  if (s.cost) out += RenderCostText(*s.cost);
  out += RenderJobsText(s.jobs);
  for (const std::string& n : s.notes) out += "  note: " + TerminalSafe(n) + "\n";
  return out;
}

}  // namespace gp::watch
