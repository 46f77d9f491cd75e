// `gpuprep watch`: sample every GPU (NVML) and the host (/proc) every --interval and judge each --window
// why the GPUs are underused (src/watch/, docs/watch.md). --json writes JSON Lines (sample, verdict and
// summary records, docs/json.md); --replay FILE judges such a recording again; --prices prices the run's
// GPU time; --prometheus FILE writes a node_exporter textfile; --root DIR reads the host side from a tree.
// Exit 0 when it ran, 1 when NVML cannot be loaded or initialised, no GPU is found, a GPU was lost or a
// --fail-on verdict held, 2 for bad usage.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ostream>

#include "cli/commands.h"
#include "cli/prom_path.h"
#include "cli/size_inputs.h"
#include "cli/watch_output.h"
#include "manifest/loader.h"
#include "sys/clock.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"
#include "watch/duration.h"
#include "watch/host.h"
#include "watch/run.h"

namespace gp::cli {
namespace {

struct WatchFlags {
  std::string duration, interval = "1s", window, replay, prices_file, flat_price, prometheus;
  std::vector<std::string> gpus, thresholds, fail_on;
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

// --fail-on's verdict names, checked before anything runs.
std::vector<std::string> FailOn(const std::vector<std::string>& names) {
  std::vector<std::string> known, out;
  for (int k = 0; k < watch::kVerdictKinds; ++k)
    known.emplace_back(watch::VerdictName(static_cast<watch::VerdictKind>(k)));
  for (const std::string& raw : names) {
    const std::string n(Trim(raw));
    if (n.empty()) continue;
    if (!watch::VerdictFromName(n)) {
      std::string msg = "unknown verdict \"" + TerminalSafe(n) + "\"";
      if (auto guess = DidYouMean(n, known)) msg += " (did you mean \"" + *guess + "\"?)";
      throw FlagError("--fail-on", msg);
    }
    out.push_back(n);
  }
  return out;
}

// Exit 1 when any GPU had a listed verdict in any window of the run; else the run's own code.
int ApplyFailOn(int rc, const std::vector<std::string>& fail_on, const watch::Summary& s) {
  if (rc != kExitOk) return rc;
  for (const watch::GpuSummary& g : s.gpus)
    for (const std::string& n : fail_on)
      if (auto it = g.windows.find(n); it != g.windows.end() && it->second > 0) {
        spdlog::error("--fail-on: GPU {} was {} in {} window(s)", g.gpu.index, n, it->second);
        rc = kExitFailed;
      }
  return rc;
}

// --prices / --price-per-gpu-hour as the run's price look-up by NVML name.
void SetPrices(Context& ctx, const WatchFlags& f, watch::WatchOptions& o) {
  std::optional<prices::Table> table = LoadPrices(ctx, f.prices_file, f.flat_price);
  if (!table) return;
  o.currency = table->currency;
  o.price_of = [t = *table](const std::string& nvml_name) {
    return t.For(PriceNamesOfNvmlGpu(manifest::EmbeddedCompat(), nvml_name));
  };
}

// A replay judges the recording as it was taken: the flags of a live run are refused.
void CheckReplayFlags(const Context& ctx, const WatchFlags& f) {
  if (!ctx.opts.root.empty()) throw FlagError("--root", "a live run only (a replay reads no host)");
  if (!f.prometheus.empty())
    throw FlagError("--prometheus", "a live run only (a replay is not the host's state)");
  if (!f.gpus.empty() || !f.duration.empty() || f.interval != "1s")
    throw UsageError(
        "--replay judges the recording as it was taken: --gpu, --interval and --duration do not apply");
}

// Opens NVML into `opened` and picks the GPUs --gpu names (all by default); the session is closed again when
// there is none to watch. In a child pid namespace NVML's host PIDs name nothing here.
std::vector<size_t> OpenGpus(Context& ctx, const WatchFlags& f, const std::shared_ptr<sys::Fs>& proc_fs,
                             sys::NvmlOpenResult& opened) {
  const bool child_pid_namespace = watch::InChildPidNamespace(*proc_fs);
  sys::NvmlSessionOptions so;
  so.pid_visible = [proc_fs, child_pid_namespace](unsigned pid) {
    return !child_pid_namespace && proc_fs->Exists("/proc/" + std::to_string(pid));
  };
  if (!ctx.open_nvml) throw Error(kExitFailed, "watch: NVML cannot be loaded here");
  opened = ctx.open_nvml(so);
  if (!opened.session) throw Error(kExitFailed, "watch: " + opened.error);
  if (opened.session->Gpus().empty()) {
    opened.session->Close();
    throw Error(kExitFailed, "watch: NVML found no GPU");
  }
  try {
    return watch::SelectGpus(opened.session->Gpus(), f.gpus);
  } catch (const Error&) {
    opened.session->Close();
    throw;
  }
}

int RunWatch(Context& ctx, const WatchFlags& f) {
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
  const std::vector<std::string> fail_on = FailOn(f.fail_on);
  SetPrices(ctx, f, o);
  o.window_given = !f.window.empty();
  o.window_ms = o.window_given ? Duration("--window", f.window) : 60000;
  WatchOutput out(ctx, PromPath(ctx, f.prometheus), f.replay.empty());
  if (!f.replay.empty()) {
    CheckReplayFlags(ctx, f);
    return ApplyFailOn(watch::Replay(f.replay, o, out), fail_on, out.summary());
  }
  o.interval_ms = Duration("--interval", f.interval);
  if (o.interval_ms < kMinIntervalMs)
    throw FlagError("--interval", "at least 100ms (GPM needs that between samples)");
  if (o.window_ms < 2 * o.interval_ms) throw FlagError("--window", "at least two intervals");
  if (!f.duration.empty()) o.duration_ms = Duration("--duration", f.duration);

  // The session's process-list check asks /proc from the worker threads, possibly after a stuck call
  // returns late: it owns its filesystem.
  // --root DIR: the host side (/proc, /sys/fs/cgroup) is read from that tree; the GPUs are still NVML's.
  std::shared_ptr<sys::Fs> proc_fs = ctx.make_fs(ctx.opts.root.empty() ? "/" : ctx.opts.root);
  if (!ctx.opts.root.empty() && !proc_fs->IsDir("/proc"))
    throw FlagError("--root", "\"" + TerminalSafe(ctx.opts.root) + "\": no proc directory under it");
  sys::NvmlOpenResult opened;
  const std::vector<size_t> positions = OpenGpus(ctx, f, proc_fs, opened);
  watch::HostSamplerOptions ho;
  ho.ticks_per_second = sys::ClockTicksPerSecond();
  watch::HostSampler host(*proc_fs, ho);
  spdlog::info(
      "watching {} GPU(s) every {}, a verdict per GPU every {}{}", positions.size(),
      watch::FormatDuration(o.interval_ms), watch::FormatDuration(o.window_ms),
      o.duration_ms ? " for " + watch::FormatDuration(*o.duration_ms) : std::string(" until Ctrl-C"));
  // The Xid events of the run: the kernel log from now on (/dev/kmsg; under --root, the tree's dev/kmsg when
  // it has one). Reading it needs root where kernel.dmesg_restrict is set: without it watch still runs.
  sys::KmsgFollower kernel_log;
  const std::string kmsg = ctx.opts.root.empty() ? "/dev/kmsg" : ctx.opts.root + "/dev/kmsg";
  if (ctx.opts.root.empty() || proc_fs->Exists("/dev/kmsg"))
    if (std::string e = kernel_log.Open(kmsg); !e.empty())
      spdlog::warn("Xid events of this run are not followed: {}", TerminalSafe(e));
  std::unique_ptr<sys::Waiter> waiter = ctx.make_waiter();
  const std::function<long long()> wall = ctx.wall_ms ? ctx.wall_ms : [] { return sys::UnixMillis(); };
  return ApplyFailOn(watch::RunLive(*opened.session, positions, host, o, *waiter, wall, &kernel_log, out),
                     fail_on, out.summary());
}

}  // namespace

void RegisterWatch(CLI::App* sub, Context& ctx, int& exit_code) {
  auto f = std::make_shared<WatchFlags>();
  sub->add_option("--duration", f->duration, "Stop after this long (e.g. 10m; ms, s, m, h; bare = seconds)");
  sub->add_option("--interval", f->interval, "Time between samples (default 1s, at least 100ms)");
  sub->add_option("--window", f->window, "Time each verdict covers (default 60s; a replay: the recording's)");
  sub->add_option("--gpu", f->gpus, "Only these GPUs: index or UUID (repeatable, or comma-separated)")
      ->delimiter(',');
  sub->add_option("--replay", f->replay, "Judge a watch --json recording instead of sampling");
  sub->add_option("--threshold", f->thresholds, "NAME=VALUE: change a rule's threshold (repeatable)");
  sub->add_option("--prices", f->prices_file, "A kind: Prices document (as size reads): the cost of the run");
  sub->add_option("--price-per-gpu-hour", f->flat_price, "One price per GPU-hour for every GPU");
  sub->add_option("--prometheus", f->prometheus, "Write the verdicts as a node_exporter textfile (*.prom)");
  sub->add_option("--fail-on", f->fail_on, "Exit 1 when a GPU had one of these verdicts (comma-separated)")
      ->delimiter(',');
  sub->add_flag("--list-thresholds", f->list_thresholds, "Print every threshold with its value and exit");
  sub->callback([&ctx, &exit_code, f] { exit_code = RunWatch(ctx, *f); });
}

}  // namespace gp::cli
