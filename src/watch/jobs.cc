// Per-job grouping (jobs.h).
#include "watch/jobs.h"

#include <algorithm>

#include "watch/cost.h"
#include "watch/job.h"

namespace gp::watch {
namespace {

using J = nlohmann::ordered_json;

// The distinct jobs with a process on a GPU in one sample, by key; nullopt when NVML did not read its
// process list then.
std::optional<std::map<std::string, Job>> JobsOn(const GpuSample& g) {
  if (g.state != GpuState::kOk || !g.processes) return std::nullopt;
  std::map<std::string, Job> out;
  for (const GpuProcess& p : *g.processes) {
    const Job j = p.job ? *p.job : UnknownJob("not in the recording (made before per-job grouping)");
    out.emplace(j.Key(), j);
  }
  return out;
}

// Adds one sample's split of GPU `g` to `into`; returns whether the GPU was read.
bool Count(const GpuSample& g, Shares& into, std::map<std::string, Job>* seen) {
  auto jobs = JobsOn(g);
  if (!jobs) return false;
  if (jobs->empty()) into[kNoJob] += 1;
  for (const auto& [key, job] : *jobs) {
    into[key] += 1.0 / static_cast<double>(jobs->size());
    if (seen) seen->emplace(key, job);
  }
  return true;
}

J Nullable(const std::string& s) { return s.empty() ? J(nullptr) : J(s); }

std::string GpuList(const std::vector<unsigned>& gpus) {
  std::string out;
  for (unsigned g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

}  // namespace

JobSummary& JobLedger::Entry(const std::string& key) {
  auto it = jobs_.find(key);
  if (it != jobs_.end()) return it->second;
  order_.push_back(key);
  JobSummary& e = jobs_[key];
  if (key == kNoJob) e.job.kind = kNoJob;
  return e;
}

std::string JobLedger::Held(const std::string& key, bool add) {
  if (key == kNoJob || jobs_.count(key) != 0) return key;
  const size_t kept = jobs_.size() - jobs_.count(kNoJob) - jobs_.count(kOtherJobs);
  if (add && kept < kMaxJobs && folded_.count(key) == 0) return key;
  if (add) folded_.insert(key);
  return kOtherJobs;
}

void JobLedger::AddSample(const Sample& s) {
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    std::map<std::string, Job> seen;
    Shares raw, counted;
    read_[i] += Count(s.gpus[i], raw, &seen) ? 1 : 0;
    for (const auto& [key, n] : raw) counted[Held(key, true)] += n;
    for (const auto& [key, n] : counted) {
      JobSummary& e = Entry(key);
      if (auto j = seen.find(key); j != seen.end() && e.job.kind.empty()) e.job = j->second;
      if (key == kOtherJobs) e.job.kind = kOtherJobs;
      if (std::find(e.gpus.begin(), e.gpus.end(), s.gpus[i].id.index) == e.gpus.end()) {
        e.gpus.push_back(s.gpus[i].id.index);
        std::sort(e.gpus.begin(), e.gpus.end());
      }
      presence_[i][key] += n;
    }
  }
}

Shares JobLedger::WindowShares(const std::vector<Sample>& window, size_t position) {
  Shares out;
  double read = 0;
  for (const Sample& s : window)
    if (position < s.gpus.size() && Count(s.gpus[position], out, nullptr)) read += 1;
  if (read == 0) return {{kNoJob, 1.0}};  // never read in the window: its time is nobody's
  for (auto& [key, n] : out) n /= read;
  return out;
}

void JobLedger::AddWindow(size_t position, const Shares& shares,
                          const std::vector<std::pair<std::string, double>>& verdict_ms) {
  if (verdict_ms.empty()) return;  // a lost GPU's window: nobody's time
  Shares held;                     // every job of the window was seen by AddSample: one not kept is "other"
  for (const auto& [key, share] : shares) held[Held(key, false)] += share;
  for (const auto& [key, share] : held) {
    if (share <= 0) continue;
    JobSummary& e = Entry(key);
    for (const auto& [verdict, ms] : verdict_ms) {
      e.verdict_ms[position][verdict] += ms * share;
      ++e.windows[verdict];
    }
  }
}

std::vector<JobSummary> JobLedger::Jobs() const {
  std::vector<JobSummary> out;
  out.reserve(order_.size() + 1);
  std::optional<JobSummary> none;
  if (auto it = jobs_.find(kNoJob); it != jobs_.end()) none = it->second;
  for (const auto& [position, read] : read_) {  // a GPU never read: its time is nobody's
    if (read > 0) continue;
    if (!none) none = JobSummary{};
    none->job.kind = kNoJob;
    none->run_share[position] = 1;
  }
  for (const std::string& key : order_) {
    if (key == kNoJob || key == kOtherJobs) continue;
    out.push_back(jobs_.at(key));
  }
  if (auto it = jobs_.find(kOtherJobs); it != jobs_.end()) {
    out.push_back(it->second);
    out.back().folded = folded_.size();
    out.back().job.reason = std::to_string(folded_.size()) + " jobs seen after the first " +
                            std::to_string(kMaxJobs) + ", counted together";
  }
  if (none) out.push_back(*none);
  for (JobSummary& e : out) {
    const std::string key = e.job.kind == kNoJob ? kNoJob : e.job.Key();
    for (const auto& [position, read] : read_) {
      if (read <= 0) continue;
      auto p = presence_.find(position);
      if (p == presence_.end()) continue;
      if (auto k = p->second.find(key); k != p->second.end()) e.run_share[position] = k->second / read;
    }
    std::map<std::string, double> total;
    for (const auto& [position, by] : e.verdict_ms)
      for (const auto& [verdict, ms] : by) total[verdict] += ms;
    double best = 0;
    for (const auto& [verdict, ms] : total)
      if (ms > best) {
        best = ms;
        e.verdict = verdict;
      }
  }
  return out;
}

void PriceJobs(Summary& s, const std::vector<std::optional<double>>& price, const std::string& currency,
               double sm_active_guidance) {
  const double wall_ms = std::max(0LL, s.end_ms - s.start_ms);
  for (JobSummary& e : s.jobs) {
    std::vector<CostPart> parts;
    std::map<size_t, bool> positions;
    for (const auto& [p, by] : e.verdict_ms) positions[p] = true;
    for (const auto& [p, share] : e.run_share) positions[p] = true;
    for (const auto& [p, _] : positions) {
      if (p >= s.gpus.size()) continue;
      CostPart part;
      part.gpu_index = s.gpus[p].gpu.index;
      part.price = p < price.size() ? price[p] : std::nullopt;
      double judged = 0;
      for (const auto& [verdict, ms] : s.gpus[p].verdict_ms) judged += ms;
      if (auto it = e.verdict_ms.find(p); it != e.verdict_ms.end()) part.verdict_ms = it->second;
      auto share = e.run_share.find(p);
      part.verdict_ms["unjudged"] +=
          std::max(0.0, wall_ms - judged) * (share == e.run_share.end() ? 0.0 : share->second);
      parts.push_back(std::move(part));
    }
    e.cost = CostOfParts(parts, wall_ms / 1000.0, currency, sm_active_guidance);
  }
}

J JobsJson(const std::vector<JobSummary>& jobs) {
  J out = J::array();
  for (const JobSummary& e : jobs) {
    J w = J::object();
    for (const auto& [k, n] : e.windows) w[k] = n;
    out.push_back({{"key", e.job.kind == kNoJob ? std::string(kNoJob) : e.job.Key()},
                   {"kind", e.job.kind},
                   {"id", Nullable(e.job.id)},
                   {"cgroup", Nullable(e.job.cgroup)},
                   {"reason", Nullable(e.job.reason)},
                   {"gpus", e.gpus},
                   {"windows", w},
                   {"verdict", e.verdict ? J(*e.verdict) : J(nullptr)},
                   {"cost", e.cost ? CostJson(*e.cost) : J(nullptr)}});
  }
  return out;
}

std::string RenderJobsText(const std::vector<JobSummary>& jobs) {
  if (jobs.empty() || (jobs.size() == 1 && jobs[0].job.kind == kNoJob)) return "";
  std::string out = "  jobs (a GPU's time split equally between the jobs on it, sample by sample):\n";
  for (const JobSummary& e : jobs) {
    if (e.job.kind == kNoJob)
      out += "    no process";
    else if (e.job.kind == kOtherJobs)
      out += "    " + std::to_string(e.folded) + " other jobs";
    else
      out += "    " + JobLabel(e.job);
    if (!e.gpus.empty()) out += " on GPU " + GpuList(e.gpus);
    out += ": " + (e.verdict ? "mostly " + *e.verdict : std::string("not judged"));
    std::string counts;
    for (const auto& [name, n] : e.windows)
      counts += (counts.empty() ? "" : ", ") + name + " " + std::to_string(n);
    if (!counts.empty()) out += " (GPU-windows: " + counts + ")";
    out += "\n";
    if (e.cost) out += "      " + CostPhrase(*e.cost) + "\n";
  }
  return out;
}

}  // namespace gp::watch
