// `gpuprep watch`: sample every GPU (NVML) and the host (/proc) every --interval and judge each --window
// why the GPUs are underused (src/watch/, docs/watch.md). --json writes JSON Lines (sample, verdict and
// summary records, docs/json.md); --replay FILE judges such a recording again. Exit 0 when it ran, 1 when
// NVML cannot be loaded or initialised, no GPU is found or a GPU was lost, 2 for bad usage (--root too).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "sys/clock.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "watch/duration.h"
#include "watch/host.h"
#include "watch/jsonl.h"
#include "watch/run.h"
#include "watch/text.h"

namespace gp::cli {
namespace {

struct WatchFlags {
  std::string duration, interval = "1s", window, replay;
  std::vector<std::string> gpus, thresholds;
  bool list_thresholds = false;
};

// The minimum interval: GPM needs more than 100 ms between its two samples (nvml.h, nvmlGpmSampleGet).
constexpr long long kMinIntervalMs = 100;

long long Duration(const std::string& flag, const std::string& text) {
  auto ms = watch::ParseDuration(text);
  if (!ms)
    throw FlagError(flag, "\"" + text + "\" is not a duration (a number with ms, s, m or h; bare = seconds)");
  return *ms;
}

class StreamOutput : public watch::Output {
 public:
  explicit StreamOutput(Context& ctx) : ctx_(ctx) {}
  void OnSample(const watch::Sample& s) override {
    if (!ctx_.opts.json) return;
    PrintJson(ctx_, watch::SampleJson(s), -1);
    ctx_.out->flush();
  }
  void OnVerdicts(const std::vector<watch::Verdict>& vs) override {
    for (const watch::Verdict& v : vs) {
      if (ctx_.opts.json)
        PrintJson(ctx_, watch::VerdictJson(v), -1);
      else
        *ctx_.out << watch::RenderVerdictText(v);
    }
    ctx_.out->flush();
  }
  void OnSummary(const watch::Summary& s) override {
    if (ctx_.opts.json)
      PrintJson(ctx_, watch::SummaryJson(s), -1);
    else
      *ctx_.out << watch::RenderSummaryText(s);
    ctx_.out->flush();
  }

 private:
  Context& ctx_;
};

int RunWatch(Context& ctx, const WatchFlags& f) {
  if (!ctx.opts.root.empty())
    throw FlagError(
        "--root", "watch samples the live host's GPUs; it cannot read them from a tree (use --replay FILE)");
  watch::WatchOptions o;
  for (const std::string& a : f.thresholds)
    if (std::string e = watch::SetThreshold(o.thresholds, a); !e.empty()) throw FlagError("--threshold", e);
  if (f.list_thresholds) {
    for (const auto& t : watch::ListThresholds(o.thresholds)) {
      char value[32];
      std::snprintf(value, sizeof value, "%.10g", t.value);  // 1073741824, not 1.07374e+09
      *ctx.out << t.name << "=" << value << "\n";
    }
    return kExitOk;
  }
  o.window_given = !f.window.empty();
  o.window_ms = o.window_given ? Duration("--window", f.window) : 60000;
  StreamOutput out(ctx);
  if (!f.replay.empty()) {
    if (!f.gpus.empty() || !f.duration.empty() || f.interval != "1s")
      throw UsageError(
          "--replay judges the recording as it was taken: --gpu, --interval and --duration do not apply");
    return watch::Replay(sys::AbsoluteFromCwd(f.replay), o, out);
  }
  o.interval_ms = Duration("--interval", f.interval);
  if (o.interval_ms < kMinIntervalMs)
    throw FlagError("--interval", "at least 100ms (GPM needs that between samples)");
  if (o.window_ms < 2 * o.interval_ms) throw FlagError("--window", "at least two intervals");
  if (!f.duration.empty()) o.duration_ms = Duration("--duration", f.duration);

  // The session's process-list check asks /proc from the worker threads, possibly after a stuck call
  // returns late: it owns its filesystem. In a child pid namespace NVML's host PIDs name nothing here.
  std::shared_ptr<sys::Fs> proc_fs = ctx.make_fs("/");
  const bool child_pid_namespace = watch::InChildPidNamespace(*proc_fs);
  sys::NvmlSessionOptions so;
  so.pid_visible = [proc_fs, child_pid_namespace](unsigned pid) {
    return !child_pid_namespace && proc_fs->Exists("/proc/" + std::to_string(pid));
  };
  if (!ctx.open_nvml) throw Error(kExitFailed, "watch: NVML cannot be loaded here");
  sys::NvmlOpenResult opened = ctx.open_nvml(so);
  if (!opened.session) throw Error(kExitFailed, "watch: " + opened.error);
  if (opened.session->Gpus().empty()) {
    opened.session->Close();
    throw Error(kExitFailed, "watch: NVML found no GPU");
  }
  std::vector<size_t> positions;
  try {
    positions = watch::SelectGpus(opened.session->Gpus(), f.gpus);
  } catch (const Error&) {
    opened.session->Close();
    throw;
  }
  watch::HostSamplerOptions ho;
  ho.ticks_per_second = sys::ClockTicksPerSecond();
  watch::HostSampler host(*proc_fs, ho);
  spdlog::info(
      "watching {} GPU(s) every {}, a verdict per GPU every {}{}", positions.size(),
      watch::FormatDuration(o.interval_ms), watch::FormatDuration(o.window_ms),
      o.duration_ms ? " for " + watch::FormatDuration(*o.duration_ms) : std::string(" until Ctrl-C"));
  std::unique_ptr<sys::Waiter> waiter = ctx.make_waiter();
  const std::function<long long()> wall = ctx.wall_ms ? ctx.wall_ms : [] { return sys::UnixMillis(); };
  return watch::RunLive(*opened.session, positions, host, o, *waiter, wall, out);
}

}  // namespace

void RegisterWatch(CLI::App& app, Context& ctx, int& exit_code) {
  auto f = std::make_shared<WatchFlags>();
  CLI::App* sub =
      app.add_subcommand("watch", "Sample the GPUs and the host; judge each window why GPUs are underused");
  sub->add_option("--duration", f->duration, "Stop after this long (e.g. 10m; ms, s, m, h; bare = seconds)");
  sub->add_option("--interval", f->interval, "Time between samples (default 1s, at least 100ms)");
  sub->add_option("--window", f->window, "Time each verdict covers (default 60s; a replay: the recording's)");
  sub->add_option("--gpu", f->gpus, "Only these GPUs: index or UUID (repeatable, or comma-separated)")
      ->delimiter(',');
  sub->add_option("--replay", f->replay, "Judge a watch --json recording instead of sampling");
  sub->add_option("--threshold", f->thresholds, "NAME=VALUE: change a rule's threshold (repeatable)");
  sub->add_flag("--list-thresholds", f->list_thresholds, "Print every threshold with its value and exit");
  sub->callback([&ctx, &exit_code, f] { exit_code = RunWatch(ctx, *f); });
}

}  // namespace gp::cli
