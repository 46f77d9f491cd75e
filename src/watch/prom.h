// `watch --prometheus FILE`: the verdicts as a node_exporter textfile (the Prometheus text exposition
// format, https://prometheus.io/docs/instrumenting/exposition_formats/; the textfile collector's
// convention, https://github.com/prometheus/node_exporter#textfile-collector: no client timestamps).
// Every name starts gpuprep_watch_ (doctor --health's textfile has gpuprep_health_*: the two never share a
// series); base units, ratios are 0-1, counters end in _total. The GPU labels
// are dcgm-exporter's (gpu, UUID, pci_bus_id, modelName; a MIG instance adds GPU_I_ID), so a dashboard
// joins the two on them. Every label value is escaped (backslash, double quote, line feed) after
// TerminalSafe, so a hostile GPU name can neither break a line nor carry invalid UTF-8. Pure: the CLI
// writes the text (atomically, beside the file and renamed).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "watch/verdict.h"

namespace gp::watch {

class PromState {
 public:
  // A window closed with these verdicts (the GPUs are learnt from them).
  void Add(const std::vector<Verdict>& verdicts, long long window_ms);
  // The run's GPUs from the first sample: metrics exist for each before its first verdict.
  void SetGpus(const std::vector<std::pair<GpuId, std::string>>& gpus);
  // A sample found the GPU lost (NVML_ERROR_GPU_IS_LOST); true the first time, when the file should be
  // written again.
  bool MarkLost(const GpuId& id);
  // A sample's Xid events for the GPU (watch/xid.h); true when it had any, when the file should be
  // written again.
  bool AddXids(const GpuSample& sample);
  // The whole file; `up` false for the final write when the run ends.
  std::string Render(bool up) const;

 private:
  struct Gpu {
    GpuId id;
    std::string name;
    std::map<std::string, unsigned> windows;  // verdict -> windows
    std::map<std::string, double> seconds;    // verdict -> judged seconds (MIG instances share)
    std::vector<Verdict> last;                // the last window's verdicts (one per MIG instance)
    bool lost = false;
    std::set<std::string> codes;         // every health code the GPU has had in the run
    std::map<int, unsigned> xids;        // Xid -> events logged in the run
    std::set<std::string> window_codes;  // the Xid codes of the window being filled
  };
  Gpu& Find(const GpuId& id, const std::string& name);
  void RenderRun(std::string& out, bool up) const;
  void RenderVerdicts(std::string& out) const;
  void RenderHealth(std::string& out) const;
  void RenderXids(std::string& out) const;
  void RenderGauges(std::string& out) const;
  std::vector<Gpu> gpus_;
  long long window_ms_ = 0;
  long long last_end_ms_ = 0;
  unsigned windows_ = 0;
};

}  // namespace gp::watch
