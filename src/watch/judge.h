// Windows over a stream of samples: samples go in one at a time, the verdicts of each window come out
// when a later sample (or the end of the run) closes it, and the summary at the end. Live runs and
// replays feed it the same samples, so they give the same verdicts. Windows are [start, start + window)
// from the first sample's time, back to back; a window is judged only once the run has passed its end.
#pragma once
#include <set>
#include <utility>
#include <vector>

#include "watch/jobs.h"
#include "watch/rules.h"
#include "watch/sample.h"
#include "watch/thresholds.h"
#include "watch/verdict.h"

namespace gp::watch {

class Judge {
 public:
  Judge(const Thresholds& t, long long window_ms) : t_(t), window_ms_(window_ms) {}

  // Adds one sample (its GPUs must be the first sample's, in the same order: the caller checks). Returns
  // the verdicts of the windows it closes.
  std::vector<Verdict> Add(const Sample& s);
  // The run ended at `end_ms`: judges the open window when the run reached its end. Then Summary().
  std::vector<Verdict> Finish(long long end_ms);
  // The summary so far; its jobs (watch/jobs.h) are made once, by Finish.
  const Summary& GetSummary() const { return summary_; }
  void AddNote(const std::string& note);

 private:
  std::vector<Verdict> Close();
  void Count(std::vector<Verdict>& v);
  void NoteXids(const Sample& s);

  Thresholds t_;
  long long window_ms_;
  std::vector<Sample> open_;  // the samples of the window being filled
  long long window_start_ = 0;
  bool started_ = false;
  Summary summary_;
  JobLedger jobs_;
  std::set<std::pair<unsigned, int>> xids_noted_;  // (GPU index, Xid) pairs the notes name
};

}  // namespace gp::watch
