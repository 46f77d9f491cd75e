#include "watch/judge.h"

#include <algorithm>

#include "util/xid_catalogue.h"
#include "watch/duration.h"
#include "watch/jsonl.h"

namespace gp::watch {
namespace {

// "rule: condition, condition": the rule an unclassified window came closest to and what it failed.
std::string ClosestKey(const Verdict& v) {
  std::string key = v.evidence.value("closest_rule", std::string("none")) + ":";
  const auto failed = v.evidence.find("failed_conditions");
  if (failed != v.evidence.end())
    for (const auto& c : *failed) key += (key.back() == ':' ? " " : ", ") + c.value("name", std::string());
  return key;
}

// The health codes of the Xid events a GPU logged in the window join its verdicts' (doctor's finding for
// each event, util/xid_catalogue.h), whatever the verdict is: a GPU can be busy and still log them.
void AddXidCodes(const std::vector<Sample>& window, std::vector<Verdict>& verdicts) {
  for (Verdict& v : verdicts)
    for (const Sample& s : window)
      for (const GpuSample& g : s.gpus) {
        if (g.id.index != v.gpu.index) continue;
        for (const GpuXid& x : g.xids) {
          const std::string code = XidHealthCode(x.xid);
          if (std::find(v.health_codes.begin(), v.health_codes.end(), code) == v.health_codes.end())
            v.health_codes.push_back(code);
        }
      }
}

}  // namespace

void Judge::NoteXids(const Sample& s) {
  for (const GpuSample& g : s.gpus)
    for (const GpuXid& x : g.xids) {
      if (!xids_noted_.insert({g.id.index, x.xid}).second) continue;
      const XidInfo* info = FindXid(x.xid);
      AddNote("GPU " + std::to_string(g.id.index) + " logged Xid " + std::to_string(x.xid) +
              (info ? std::string(" (") + info->description + ")"
                    : std::string(", a code NVIDIA's catalogue "
                                  "does not list,")) +
              " at " + Rfc3339(s.time_ms) + ", first of the run: " + XidHealthCode(x.xid) +
              "; gpuprep doctor --health names its fix");
    }
}

void Judge::AddNote(const std::string& note) {
  if (std::find(summary_.notes.begin(), summary_.notes.end(), note) == summary_.notes.end())
    summary_.notes.push_back(note);
}

void Judge::Count(std::vector<Verdict>& verdicts) {
  for (size_t position = 0; position < summary_.gpus.size(); ++position) {
    GpuSummary& g = summary_.gpus[position];
    const Shares shares = JobLedger::WindowShares(open_, position);
    std::vector<std::string> keys;
    for (const auto& [key, share] : shares)
      if (share > 0 && key != kNoJob) keys.push_back(key);
    bool lost = false;
    unsigned n = 0;
    for (const LostGpu& l : summary_.lost_gpus)
      lost = lost || (l.gpu.index == g.gpu.index && l.time_ms < window_start_ + window_ms_);
    for (const Verdict& v : verdicts) n += v.gpu.index == g.gpu.index ? 1 : 0;
    std::vector<std::pair<std::string, double>> time;
    for (Verdict& v : verdicts) {
      if (v.gpu.index != g.gpu.index) continue;
      v.jobs = keys;
      time.emplace_back(VerdictName(v.kind), static_cast<double>(window_ms_) / n);
      if (v.kind == VerdictKind::kUnclassified) ++g.unclassified_closest[ClosestKey(v)];
    }
    if (n == 0 && !lost) time.emplace_back("unclassified", static_cast<double>(window_ms_));
    for (const auto& [name, ms] : time) {
      ++g.windows[name];
      g.verdict_ms[name] += ms;
    }
    jobs_.AddWindow(position, shares, time);
  }
}

std::vector<Verdict> Judge::Close() {
  std::vector<Verdict> v = JudgeWindow(open_, window_start_, window_start_ + window_ms_, t_);
  AddXidCodes(open_, v);
  Count(v);
  ++summary_.windows;
  summary_.judged = true;
  open_.clear();
  window_start_ += window_ms_;
  return v;
}

std::vector<Verdict> Judge::Add(const Sample& s) {
  std::vector<Verdict> out;
  if (!started_) {
    started_ = true;
    window_start_ = s.time_ms;
    summary_.start_ms = s.time_ms;
    summary_.interval_ms = s.interval_ms;
    summary_.window_ms = window_ms_;
    for (const GpuSample& g : s.gpus) summary_.gpus.push_back({g.id, g.name, {}, 0});
  }
  while (s.time_ms >= window_start_ + window_ms_) {
    if (open_.empty()) {  // nothing was sampled in this window (a stopped clock, a suspended host)
      window_start_ += ((s.time_ms - window_start_) / window_ms_) * window_ms_;
      break;
    }
    auto v = Close();
    out.insert(out.end(), v.begin(), v.end());
  }
  // Remarks that hold for the run, derived from the samples alone (so a replay makes the same ones).
  if (!s.host.pressure)
    AddNote("pressure stall information (/proc/pressure) is absent: the PSI conditions are not used");
  if (!s.host.unattributed_pids.empty())
    AddNote(
        "NVML lists host PIDs this pid namespace does not share (a container): their CPU and loader workers "
        "cannot "
        "be attributed; input-bound falls back to the host's CPUs");
  for (const GpuSample& g : s.gpus) {
    if (g.process_entry_bytes != 0 && g.process_entry_bytes != 24)
      AddNote("GPU " + std::to_string(g.id.index) + ": the driver wrote " +
              std::to_string(g.process_entry_bytes) +
              "-byte process entries (24 declared); the list was read with that stride");
    if (g.state == GpuState::kGap)
      AddNote("GPU " + std::to_string(g.id.index) +
              ": NVML missed the deadline; its samples are gaps until the call returns");
  }
  NoteXids(s);
  open_.push_back(s);
  jobs_.AddSample(s);
  ++summary_.samples;
  for (size_t i = 0; i < s.gpus.size() && i < summary_.gpus.size(); ++i) {
    const GpuSample& g = s.gpus[i];
    if (g.state == GpuState::kGap) ++summary_.gpus[i].gaps;
    if (g.state == GpuState::kOk && g.gpm && g.gpm->sm_active_ratio) {
      summary_.gpus[i].sm_active_sum += *g.gpm->sm_active_ratio;
      ++summary_.gpus[i].sm_active_samples;
    }
    if (g.state != GpuState::kLost) continue;
    bool known = false;
    for (const LostGpu& l : summary_.lost_gpus) known = known || l.gpu.index == g.id.index;
    if (!known) summary_.lost_gpus.push_back({g.id, s.time_ms});
  }
  return out;
}

std::vector<Verdict> Judge::Finish(long long end_ms) {
  std::vector<Verdict> out;
  summary_.end_ms = end_ms;
  if (started_ && !open_.empty() && end_ms >= window_start_ + window_ms_) out = Close();
  summary_.jobs = jobs_.Jobs();
  if (jobs_.Folded() > 0)
    AddNote("more than " + std::to_string(kMaxJobs) + " distinct jobs: the " +
            std::to_string(jobs_.Folded()) + " more jobs seen after the first " + std::to_string(kMaxJobs) +
            " are counted together as \"other\"");
  if (!summary_.judged) {
    summary_.reason = started_ ? "the run (" + FormatDuration(std::max(0LL, end_ms - summary_.start_ms)) +
                                     ") is shorter than one window (" + FormatDuration(window_ms_) + ")"
                               : std::string("no sample was taken");
  }
  return out;
}

}  // namespace gp::watch
