// `watch --prometheus FILE`: the verdicts as a node_exporter textfile (the Prometheus text exposition
// format, https://prometheus.io/docs/instrumenting/exposition_formats/; the textfile collector's
// convention, https://github.com/prometheus/node_exporter#textfile-collector: no client timestamps).
// Names carry the gpuprep_ prefix and base units, ratios are 0-1, counters end in _total. The GPU labels
// are dcgm-exporter's (gpu, UUID, pci_bus_id, modelName; a MIG instance adds GPU_I_ID), so a dashboard
// joins the two on them. Every label value is escaped (backslash, double quote, line feed) after
// TerminalSafe, so a hostile GPU name can neither break a line nor carry invalid UTF-8. Pure: the CLI
// writes the text (atomically, beside the file and renamed).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "watch/verdict.h"

namespace gp::watch {

// The exposition format's label-value escaping: \ -> \\, " -> \", line feed -> \n.
std::string PromLabelValue(const std::string& value);

class PromState {
 public:
  // A window closed with these verdicts (the GPUs are learnt from them).
  void Add(const std::vector<Verdict>& verdicts, long long window_ms);
  // The run's GPUs from the first sample: metrics exist for each before its first verdict.
  void SetGpus(const std::vector<std::pair<GpuId, std::string>>& gpus);
  // The whole file; `up` false for the final write when the run ends.
  std::string Render(bool up) const;

 private:
  struct Gpu {
    GpuId id;
    std::string name;
    std::map<std::string, unsigned> windows;  // verdict -> windows
    std::map<std::string, double> seconds;    // verdict -> judged seconds (MIG instances share)
    std::vector<Verdict> last;                // the last window's verdicts (one per MIG instance)
  };
  Gpu& Find(const GpuId& id, const std::string& name);
  std::vector<Gpu> gpus_;
  long long window_ms_ = 0;
  long long last_end_ms_ = 0;
  unsigned windows_ = 0;
};

}  // namespace gp::watch
