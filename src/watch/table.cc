// The live table (table.h).
#include "watch/table.h"

#include <algorithm>
#include <cstdio>

#include "util/input.h"
#include "watch/jsonl.h"

namespace gp::watch {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

template <typename T>
std::string Opt(const std::optional<T>& v, const char* format, double scale = 1) {
  return v ? Fmt(format, static_cast<double>(*v) * scale) : std::string("-");
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size() + 1, ' ');
}

std::string RightPad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : std::string(width - s.size(), ' ') + s + " ";
}

const char* ColorOf(VerdictKind k) {
  switch (k) {
    case VerdictKind::kHealthy:
      return "\x1b[32m";
    case VerdictKind::kIdle:
    case VerdictKind::kIdleMemoryHeld:
    case VerdictKind::kHungCollective:
      return "\x1b[31m";
    default:
      return "\x1b[33m";
  }
}

std::string Rates(const std::optional<double>& tx, const std::optional<double>& rx) {
  if (!tx && !rx) return "-";
  return Opt(tx, "%.1f", 1e-9) + "/" + Opt(rx, "%.1f", 1e-9);
}

// The GPU names of a sample, each once, in the order first seen.
std::string TableGpuNames(const Sample& s) {
  std::string names;
  for (const GpuSample& g : s.gpus)
    if (names.find(TerminalSafe(g.name)) == std::string::npos)
      names += (names.empty() ? "" : ", ") + TerminalSafe(g.name);
  return names;
}

// A GPU row's columns from DUTY to PROC.
std::string TableGpuColumns(const GpuSample& g) {
  std::string row;
  row += RightPad(Opt(g.duty_pct, "%.0f%%"), 4);
  row += RightPad(g.gpm ? Opt(g.gpm->sm_active_ratio, "%.2f") : "-", 5);
  row +=
      Pad(Opt(g.memory_used_bytes, "%.1f", 1 / kGiB) + "/" + Opt(g.memory_total_bytes, "%.0f", 1 / kGiB), 12);
  row += Pad(Opt(g.power_w, "%.0f") + "/" + Opt(g.power_limit_enforced_w, "%.0f"), 10);
  row += RightPad(Opt(g.sm_clock_mhz, "%.0f"), 6);
  row += Pad(Rates(g.pcie_tx_bytes_per_s, g.pcie_rx_bytes_per_s), 10);
  row += Pad(Rates(g.nvlink_tx_bytes_per_s, g.nvlink_rx_bytes_per_s), 11);
  row += RightPad(g.processes ? std::to_string(g.processes->size()) : "-", 4);
  return row;
}

// The verdicts in the order their lines are shown: the findings first, then the healthy ones.
std::vector<const Verdict*> TableVerdictOrder(const std::vector<Verdict>& verdicts) {
  std::vector<const Verdict*> order;
  for (const Verdict& v : verdicts)
    if (v.kind != VerdictKind::kHealthy) order.push_back(&v);
  for (const Verdict& v : verdicts)
    if (v.kind == VerdictKind::kHealthy) order.push_back(&v);
  return order;
}

// One verdict's line under the table: where, what, how sure, and why.
std::string TableVerdictLine(const Verdict& v) {
  std::string l = "GPU " + std::to_string(v.gpu.index);
  if (v.gpu_instance_id) l += " instance " + std::to_string(*v.gpu_instance_id);
  l += ": " + std::string(VerdictName(v.kind)) + " (" + ConfidenceName(v.confidence) +
       "): " + TerminalSafe(v.detail);
  return l;
}

}  // namespace

std::string CutToColumns(const std::string& line, int columns) {
  if (columns <= 0 || line.size() <= static_cast<size_t>(columns)) return line;
  size_t n = static_cast<size_t>(columns);
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;  // not inside a sequence
  return line.substr(0, n);
}

std::string RenderTable(const Sample& s, const std::vector<Verdict>& verdicts, int columns, int rows,
                        bool color) {
  std::string out;
  auto line = [&](const std::string& l) { out += CutToColumns(l, columns) + "\n"; };
  line("gpuprep watch  " + Rfc3339(s.time_ms).substr(11, 8) + " UTC  " + std::to_string(s.gpus.size()) +
       " GPU(s) " + TableGpuNames(s) + "  (Ctrl-C: summary)");
  line(Pad("GPU", 3) + RightPad("DUTY", 4) + RightPad("SM", 5) + Pad("MEM GiB", 12) + Pad("POWER W", 10) +
       RightPad("MHz", 6) + Pad("PCIe GB/s", 10) + Pad("NVLink GB/s", 11) + RightPad("PROC", 4) + "VERDICT");
  for (const GpuSample& g : s.gpus) {
    std::vector<const Verdict*> mine;
    for (const Verdict& v : verdicts)
      if (v.gpu.index == g.id.index) mine.push_back(&v);
    std::string row = Pad(std::to_string(g.id.index), 3);
    if (g.state != GpuState::kOk) {
      row += g.state == GpuState::kLost ? "lost (NVML: GPU is lost)" : "gap (NVML missed the deadline)";
      line(row);
      continue;
    }
    row += TableGpuColumns(g);
    if (mine.empty()) {
      line(row + "(judged when the window ends)");
      continue;
    }
    std::string verdict = VerdictName(mine.front()->kind);
    if (mine.size() > 1) verdict += " +" + std::to_string(mine.size() - 1) + " instances";
    if (color && columns > 0 && row.size() + verdict.size() <= static_cast<size_t>(columns))
      out += row + ColorOf(mine.front()->kind) + verdict + "\x1b[0m\n";
    else
      line(row + verdict);
  }
  const std::vector<const Verdict*> order = TableVerdictOrder(verdicts);
  const auto used = static_cast<size_t>(std::count(out.begin(), out.end(), '\n'));
  // Leave the last row free (the cursor sits there) and one for the "more" line when needed.
  size_t room = order.size();
  if (rows > 0) {
    const size_t free_rows = static_cast<size_t>(rows) > used + 1 ? static_cast<size_t>(rows) - used - 1 : 0;
    if (order.size() > free_rows) room = free_rows > 0 ? free_rows - 1 : 0;
  }
  for (size_t i = 0; i < order.size() && i < room; ++i) line(TableVerdictLine(*order[i]));
  if (room < order.size() && (rows <= 0 || used + 1 < static_cast<size_t>(rows)))
    line("... " + std::to_string(order.size() - room) + " more verdicts (a taller terminal shows them)");
  return out;
}

}  // namespace gp::watch
