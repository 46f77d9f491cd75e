#include "watch/run.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "sys/lines.h"
#include "util/error.h"
#include "watch/cost.h"
#include "watch/duration.h"
#include "watch/jobs.h"
#include "watch/jsonl.h"
#include "watch/sampler.h"
#include "watch/xid.h"

namespace gp::watch {
namespace {

constexpr size_t kMaxKernelLogTick = 1 << 20;  // bytes of kernel log read per tick; the rest waits

bool SameGpus(const Sample& a, const Sample& b) {
  if (a.gpus.size() != b.gpus.size()) return false;
  for (size_t i = 0; i < a.gpus.size(); ++i)
    if (a.gpus[i].id.index != b.gpus[i].id.index || a.gpus[i].id.uuid != b.gpus[i].id.uuid) return false;
  return true;
}

}  // namespace

Summary Priced(const Summary& s, const WatchOptions& options) {
  Summary out = s;
  std::vector<std::optional<double>> prices;
  prices.reserve(s.gpus.size());
  for (const GpuSummary& g : s.gpus)
    prices.push_back(options.price_of ? options.price_of(g.name) : std::nullopt);
  out.cost = CostOfRun(s, prices, options.currency, options.thresholds.healthy_sm_active);
  PriceJobs(out, prices, options.currency, options.thresholds.healthy_sm_active);
  return out;
}

std::vector<size_t> SelectGpus(const std::vector<sys::NvmlGpu>& gpus,
                               const std::vector<std::string>& selectors) {
  std::vector<size_t> out;
  if (selectors.empty()) {
    for (size_t i = 0; i < gpus.size(); ++i) out.push_back(i);
    return out;
  }
  for (const std::string& sel : selectors) {
    std::optional<size_t> found;
    for (size_t i = 0; i < gpus.size(); ++i) {
      const bool by_index = !sel.empty() && sel.find_first_not_of("0123456789") == std::string::npos &&
                            sel.size() < 4 && std::stoul(sel) == gpus[i].index;
      if (by_index || (!gpus[i].uuid.empty() && sel == gpus[i].uuid)) found = i;
    }
    if (!found) {
      std::string known;
      for (const auto& g : gpus) known += (known.empty() ? "" : ", ") + std::to_string(g.index);
      throw FlagError("--gpu", "\"" + sel + "\" is neither the index nor the UUID of a GPU here (indexes: " +
                                   (known.empty() ? "none" : known) + ")");
    }
    if (std::find(out.begin(), out.end(), *found) == out.end()) out.push_back(*found);
  }
  std::sort(out.begin(), out.end());
  return out;
}

long long ReadDeadlineMs(long long interval_ms) { return std::clamp(interval_ms / 2, 50LL, 2000LL); }

int RunLive(sys::NvmlSession& session, const std::vector<size_t>& positions, HostSampler& host,
            const WatchOptions& options, sys::Waiter& waiter, const std::function<long long()>& wall_ms,
            sys::KmsgFollower* kernel_log, Output& out) {
  using Clock = std::chrono::steady_clock;
  std::vector<sys::NvmlGpu> selected;
  selected.reserve(positions.size());
  for (size_t p : positions) selected.push_back(session.Gpus()[p]);
  GpuSampler sampler(selected);
  Judge judge(options.thresholds, options.window_ms);
  const auto interval = std::chrono::milliseconds(options.interval_ms);
  const auto start = Clock::now();
  const bool has_end = options.duration_ms.has_value();
  const Clock::time_point end = start + std::chrono::milliseconds(options.duration_ms.value_or(0));
  auto next = start;
  for (;;) {
    Sample s;
    s.time_ms = wall_ms();
    s.interval_ms = options.interval_ms;
    s.window_ms = options.window_ms;
    auto readings = session.Read(
        positions, Clock::now() + std::chrono::milliseconds(ReadDeadlineMs(options.interval_ms)));
    s.gpus = sampler.Convert(readings);
    if (kernel_log && kernel_log->IsOpen()) {
      const sys::LogRead log = kernel_log->ReadNew(kMaxKernelLogTick);
      if (log.ok) AttachXids(log.data, s.gpus);
    }
    std::map<unsigned, std::vector<unsigned>> pids;
    for (const GpuSample& g : s.gpus)
      if (g.processes)
        for (const GpuProcess& p : *g.processes) {
          auto& gpus = pids[p.pid];  // a process with several contexts on one GPU is listed once per context
          if (std::find(gpus.begin(), gpus.end(), g.id.index) == gpus.end()) gpus.push_back(g.id.index);
        }
    s.host = host.Sample(s.time_ms, pids);
    for (GpuSample& g : s.gpus)
      if (g.processes)
        for (GpuProcess& p : *g.processes) p.job = host.JobOf(p.pid);
    out.OnSample(s);
    if (auto v = judge.Add(s); !v.empty()) out.OnVerdicts(v);
    const bool all_lost = std::all_of(s.gpus.begin(), s.gpus.end(),
                                      [](const GpuSample& g) { return g.state == GpuState::kLost; });
    if (all_lost) break;
    const auto now = Clock::now();
    while (next <= now) next += interval;  // a late tick skips to the next slot, never bunches up
    if (has_end && next > end) {
      waiter.WaitUntil(end);
      break;
    }
    if (waiter.WaitUntil(next)) break;
  }
  auto last = judge.Finish(wall_ms());
  if (!last.empty()) out.OnVerdicts(last);
  out.OnSummary(Priced(judge.GetSummary(), options));
  session.Close();
  return judge.GetSummary().lost_gpus.empty() ? kExitOk : kExitFailed;
}

int Replay(const std::string& path, const WatchOptions& options, Output& out) {
  std::optional<Judge> judge_slot;
  std::optional<Sample> first;
  std::optional<long long> end, last_time;
  long long last_interval = 0;
  std::string error = sys::ForEachLine(path, kMaxRecordBytes, [&](std::string_view line, size_t number) {
    if (line.empty()) return true;
    if (end) throw FileError(path, static_cast<int>(number), 1, "a record after the summary");
    Record r = ParseRecord(line, path, number);
    if (r.type == Record::Type::kSummary) {
      end = r.end_ms;
      return true;
    }
    if (r.type != Record::Type::kSample) return true;  // verdicts are judged again, not read
    if (!first) {
      first = r.sample;
      if (options.window_given && options.window_ms < 2 * r.sample.interval_ms)
        throw FlagError("--window", "at least two intervals (the recording's interval is " +
                                        FormatDuration(r.sample.interval_ms) + ")");
      judge_slot.emplace(options.thresholds, options.window_given ? options.window_ms : r.sample.window_ms);
    } else if (!SameGpus(*first, r.sample))
      throw FileError(path, static_cast<int>(number), 1,
                      "gpus: not the GPUs of the first sample, in its order");
    if (last_time && r.sample.time_ms < *last_time)
      throw FileError(path, static_cast<int>(number), 1, "time: earlier than the sample before it");
    last_time = r.sample.time_ms;
    last_interval = r.sample.interval_ms;
    if (auto v = judge_slot->Add(r.sample); !v.empty()) out.OnVerdicts(v);
    return true;
  });
  if (!error.empty()) throw UsageError(error);
  if (!first) throw UsageError(path + ": no sample record (not a gpuprep watch --json recording)");
  if (!end) {
    judge_slot->AddNote(
        "the recording has no summary record (the run was cut short); it ends one interval after its last "
        "sample");
    end = *last_time + last_interval;
  }
  if (end < last_time) throw UsageError(path + ": the summary's end is before the last sample");
  auto last = judge_slot->Finish(*end);
  if (!last.empty()) out.OnVerdicts(last);
  out.OnSummary(Priced(judge_slot->GetSummary(), options));
  return judge_slot->GetSummary().lost_gpus.empty() ? kExitOk : kExitFailed;
}

}  // namespace gp::watch
