// The node_exporter textfile of a watch run (prom.h).
#include "watch/prom.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/health_codes.h"
#include "util/input.h"
#include "util/xid_catalogue.h"

namespace gp::watch {
namespace {

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

// One evidence value of the last window, scaled to base units / ratios.
struct Gauge {
  const char* key;  // evidence key
  double scale;     // to base units
  Family family;
};

const Gauge kGauges[] = {
    {"duty_mean_pct",
     0.01,
     {"gpuprep_watch_gpu_duty_cycle_ratio", "gauge",
      "Share of the last window a kernel ran (NVML utilisation samples)."}},
    {"sm_active_ratio",
     1,
     {"gpuprep_watch_gpu_sm_active_ratio", "gauge", "Mean SM activity over the last window (GPM, 0-1)."}},
    {"power_mean_w", 1, {"gpuprep_watch_gpu_power_watts", "gauge", "Mean power draw over the last window."}},
    {"power_limit_enforced_w",
     1,
     {"gpuprep_watch_gpu_power_limit_watts", "gauge", "The enforced power limit in the last window."}},
    {"memory_used_bytes",
     1,
     {"gpuprep_watch_gpu_memory_used_bytes", "gauge", "Most GPU memory used in the last window."}},
};

void Header(std::string& out, const Family& f) {
  out += "# HELP " + std::string(f.name) + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
}

// The labels that name a GPU: dcgm-exporter's (prom.h).
std::string PromGpuLabels(const GpuId& id, const std::string& name) {
  return "gpu=\"" + std::to_string(id.index) + "\",UUID=\"" + PrometheusLabelValue(id.uuid) +
         "\",pci_bus_id=\"" + PrometheusLabelValue(id.pci_bus_id) + "\",modelName=\"" +
         PrometheusLabelValue(name) + "\"";
}

// The MIG instance label of a verdict; "" for a whole GPU.
std::string PromInstanceLabel(const Verdict& v) {
  return v.gpu_instance_id ? ",GPU_I_ID=\"" + std::to_string(*v.gpu_instance_id) + "\"" : std::string();
}

}  // namespace

PromState::Gpu& PromState::Find(const GpuId& id, const std::string& name) {
  for (Gpu& g : gpus_)
    if (g.id.index == id.index) return g;
  gpus_.push_back({id, name, {}, {}, {}, false, {}, {}, {}});
  return gpus_.back();
}

void PromState::SetGpus(const std::vector<std::pair<GpuId, std::string>>& gpus) {
  for (const auto& [id, name] : gpus) Find(id, name);
}

bool PromState::MarkLost(const GpuId& id) {
  Gpu& g = Find(id, "");
  if (g.lost) return false;
  g.lost = true;
  g.codes.insert(health_codes::kGpuLost);
  return true;
}

bool PromState::AddXids(const GpuSample& sample) {
  if (sample.xids.empty()) return false;
  Gpu& g = Find(sample.id, sample.name);
  for (const GpuXid& x : sample.xids) {
    ++g.xids[x.xid];
    g.codes.insert(XidHealthCode(x.xid));
    g.window_codes.insert(XidHealthCode(x.xid));
  }
  return true;
}

void PromState::Add(const std::vector<Verdict>& verdicts, long long window_ms) {
  window_ms_ = window_ms;
  ++windows_;
  for (Gpu& g : gpus_) g.last.clear();
  for (const Verdict& v : verdicts) Find(v.gpu, "").last.push_back(v);
  for (Gpu& g : gpus_) {
    for (const Verdict& v : g.last) {
      ++g.windows[VerdictName(v.kind)];
      g.seconds[VerdictName(v.kind)] +=
          static_cast<double>(window_ms) / 1000.0 / static_cast<double>(g.last.size());
      last_end_ms_ = std::max(last_end_ms_, v.end_ms);
      g.codes.insert(v.health_codes.begin(), v.health_codes.end());
    }
    if (!g.last.empty()) g.window_codes.clear();  // the window's verdicts carry them now
  }
}

// The run as a whole: up, the window, windows judged, when the last one ended.
void PromState::RenderRun(std::string& out, bool up) const {
  Header(out, {"gpuprep_watch_up", "gauge", "1 while gpuprep watch runs; 0 once it has stopped."});
  out += std::string("gpuprep_watch_up ") + (up ? "1" : "0") + "\n";
  Header(out, {"gpuprep_watch_window_seconds", "gauge", "The time one verdict covers."});
  out += "gpuprep_watch_window_seconds " + Number(static_cast<double>(window_ms_) / 1000.0) + "\n";
  Header(out, {"gpuprep_watch_windows_judged_total", "counter", "Windows judged since the run started."});
  out += "gpuprep_watch_windows_judged_total " + std::to_string(windows_) + "\n";
  Header(out, {"gpuprep_watch_last_window_end_timestamp_seconds", "gauge",
               "When the last judged window ended (Unix time); 0 before the first."});
  out += "gpuprep_watch_last_window_end_timestamp_seconds " +
         Number(static_cast<double>(last_end_ms_) / 1000.0) + "\n";
}

// The verdicts: the last window's per GPU (or MIG instance), and windows and seconds per verdict.
void PromState::RenderVerdicts(std::string& out) const {
  Header(out, {"gpuprep_watch_verdict", "gauge",
               "1 for the verdict of the last window (one per GPU or MIG instance), 0 for the others."});
  for (const Gpu& g : gpus_)
    for (const Verdict& v : g.last)
      for (int k = 0; k < kVerdictKinds; ++k) {
        const auto kind = static_cast<VerdictKind>(k);
        out += "gpuprep_watch_verdict{" + PromGpuLabels(g.id, g.name) + PromInstanceLabel(v) + ",verdict=\"" +
               VerdictName(kind) + "\"} " + (kind == v.kind ? "1" : "0") + "\n";
      }
  Header(out, {"gpuprep_watch_verdict_windows_total", "counter", "Windows judged with each verdict."});
  for (const Gpu& g : gpus_)
    for (const auto& [name, n] : g.windows)
      out += "gpuprep_watch_verdict_windows_total{" + PromGpuLabels(g.id, g.name) + ",verdict=\"" + name +
             "\"} " + std::to_string(n) + "\n";
  Header(out, {"gpuprep_watch_verdict_seconds_total", "counter",
               "GPU time judged with each verdict (price it per GPU-hour for its cost)."});
  for (const Gpu& g : gpus_)
    for (const auto& [name, s] : g.seconds)
      out += "gpuprep_watch_verdict_seconds_total{" + PromGpuLabels(g.id, g.name) + ",verdict=\"" + name +
             "\"} " + Number(s) + "\n";
}

// The health findings each GPU has had in the run (the family only when there is one).
void PromState::RenderHealth(std::string& out) const {
  std::string health;
  for (const Gpu& g : gpus_)
    for (const std::string& code : g.codes) {
      bool now = (code == health_codes::kGpuLost && g.lost) || g.window_codes.count(code) > 0;
      for (const Verdict& v : g.last)
        now = now || std::find(v.health_codes.begin(), v.health_codes.end(), code) != v.health_codes.end();
      health += "gpuprep_watch_gpu_health{" + PromGpuLabels(g.id, g.name) + ",code=\"" +
                PrometheusLabelValue(code) + "\"} " + (now ? "1" : "0") + "\n";
    }
  if (health.empty()) return;
  Header(out, {"gpuprep_watch_gpu_health", "gauge",
               "1 while the GPU has the health finding of this code (lost; throttled by a hardware "
               "reason, or an Xid logged, in the last window or the one being filled), 0 once it had it "
               "earlier in the run."});
  out += health;
}

// The Xid events logged per GPU in the run (the family only when there is one).
void PromState::RenderXids(std::string& out) const {
  std::string xids;
  for (const Gpu& g : gpus_)
    for (const auto& [xid, n] : g.xids)
      xids += "gpuprep_watch_gpu_xid_events_total{" + PromGpuLabels(g.id, g.name) + ",xid=\"" +
              std::to_string(xid) + "\",code=\"" + PrometheusLabelValue(XidHealthCode(xid)) + "\"} " +
              std::to_string(n) + "\n";
  if (xids.empty()) return;
  Header(out, {"gpuprep_watch_gpu_xid_events_total", "counter",
               "Xid events NVIDIA's driver logged for the GPU since the run started, by Xid and the health "
               "finding's code doctor gives it."});
  out += xids;
}

// The evidence gauges of the last window, each family only where some verdict has its value.
void PromState::RenderGauges(std::string& out) const {
  for (const Gauge& gauge : kGauges) {
    std::string lines;
    for (const Gpu& g : gpus_)
      for (const Verdict& v : g.last) {
        auto it = v.evidence.find(gauge.key);
        if (it == v.evidence.end() || !it->is_number()) continue;
        lines += std::string(gauge.family.name) + "{" + PromGpuLabels(g.id, g.name) + PromInstanceLabel(v) +
                 "} " + Number(it->get<double>() * gauge.scale) + "\n";
      }
    if (lines.empty()) continue;
    Header(out, gauge.family);
    out += lines;
  }
}

std::string PromState::Render(bool up) const {
  std::string out;
  RenderRun(out, up);
  RenderVerdicts(out);
  RenderHealth(out);
  RenderXids(out);
  RenderGauges(out);
  return out;
}

}  // namespace gp::watch
