// Where `gpuprep watch`'s results go as they happen: stdout (JSON Lines with --json, else text: each
// window's verdicts, the summary), and with --prometheus FILE a node_exporter textfile rewritten once per
// window (atomically: written beside the file and renamed) and a last time with gpuprep_watch_up 0 when
// the run ends, so a dashboard never shows a stopped watch as healthy. On a terminal without --json, a
// live table (watch/table.h) is redrawn in place at every sample instead of the verdict lines; the summary
// follows it when the run ends (Ctrl-C too). The summary is kept for --fail-on.
#pragma once
#include <string>

#include "cli/context.h"
#include "watch/prom.h"
#include "watch/run.h"

namespace gp::cli {

class WatchOutput : public watch::Output {
 public:
  // `prom_path`: absolute, ending in .prom, in an existing directory (checked by the caller); "" = none.
  // `live`: a live run (a replay has no samples to draw: its verdicts stay lines on a terminal too).
  WatchOutput(Context& ctx, std::string prom_path, bool live);
  void OnSample(const watch::Sample& s) override;
  void OnVerdicts(const std::vector<watch::Verdict>& vs) override;
  void OnSummary(const watch::Summary& s) override;
  const watch::Summary& summary() const { return summary_; }

 private:
  void WriteProm(bool up);
  void Redraw(const watch::Sample& s);

  Context& ctx_;
  std::string prom_path_;
  watch::PromState prom_;
  bool started_ = false;
  long long window_ms_ = 0;
  bool table_ = false;                   // the live table (a terminal, no --json)
  std::vector<watch::Verdict> current_;  // the last window's verdicts, for the table
  watch::Summary summary_;
};

}  // namespace gp::cli
