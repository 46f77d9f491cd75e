// The two ways to run watch: live (sample NVML and the host every interval until --duration or Ctrl-C)
// and replay (read a --json recording back). Both feed the same Judge, so a recording gives the verdicts
// the live run gave. The seams come in from the caller; nothing here touches the system.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sys/kernel_log.h"
#include "sys/nvml_session.h"
#include "sys/stop_signal.h"
#include "watch/host.h"
#include "watch/judge.h"
#include "watch/sample.h"
#include "watch/thresholds.h"
#include "watch/verdict.h"

namespace gp::watch {

struct WatchOptions {
  long long interval_ms = 1000;
  long long window_ms = 60000;
  bool window_given = true;              // replay: false = judge with the recording's own window
  std::optional<long long> duration_ms;  // unset: until stopped
  Thresholds thresholds;
  // The price per GPU-hour of a GPU by its NVML name (unset: none); empty: no prices. `currency` is the
  // price list's ("" for one flat price).
  std::function<std::optional<double>(const std::string& gpu_name)> price_of;
  std::string currency;
};

// The summary with its cost (watch/cost.h) at the options' prices: what OnSummary receives.
Summary Priced(const Summary& s, const WatchOptions& options);

// Where results go as they happen (stdout as JSON Lines or text: cli/watch.cc).
class Output {
 public:
  virtual ~Output() = default;
  virtual void OnSample(const Sample& s) = 0;
  virtual void OnVerdicts(const std::vector<Verdict>& v) = 0;
  virtual void OnSummary(const Summary& s) = 0;
};

// The NVML positions (indexes into `gpus`) that `selectors` name: a device index ("3") or a UUID
// ("GPU-5b1c..."); every GPU when `selectors` is empty. Throws FlagError("--gpu") for one that names none.
std::vector<size_t> SelectGpus(const std::vector<sys::NvmlGpu>& gpus,
                               const std::vector<std::string>& selectors);

// How long a tick waits for a GPU's answers: half the interval, within [50 ms, 2 s].
long long ReadDeadlineMs(long long interval_ms);

// Samples until the duration passes or `waiter` is stopped; returns the exit code (1 when a GPU was
// lost, else 0). Closes the session (without nvmlShutdown when a call is stuck). `kernel_log`, when open,
// is read at each tick for the Xid events logged since the previous one (watch/xid.h).
int RunLive(sys::NvmlSession& session, const std::vector<size_t>& positions, HostSampler& host,
            const WatchOptions& options, sys::Waiter& waiter, const std::function<long long()>& wall_ms,
            sys::KmsgFollower* kernel_log, Output& out);

// Judges a recording: every sample record, in order; the summary record's end (when the recording has
// one). Exit 1 when a GPU was lost in it, else 0. Throws FileError for a record that is not valid.
int Replay(const std::string& path, const WatchOptions& options, Output& out);

}  // namespace gp::watch
