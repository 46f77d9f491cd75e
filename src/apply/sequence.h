// The apply sequence, in the order `gpuprep apply` runs it: refusals before anything (not root, no --yes, a
// bad --callback), the journal (what --resume continues), the stack, the apply lock, then
//   plan -> preflight (the repositories' index) -> re-plan -> the running kernel's headers asked of the
//   host's own sources -> re-plan -> blockers refused -> execute (apply/executor.h) -> status.json ->
//   --callback POST,
// with the reboot (exit 3, the callback kept for the resumed run) and the resume (--resume: the journal's
// manifest, layer filters and touched layers) in between. Every system access goes through the seams
// below, so unit tests run the whole sequence against a temp dir and a recording runner; cli/apply.cc holds
// the flags and the printing, main the real seams.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apply/verify.h"
#include "host/files.h"
#include "manifest/model.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "probe/host.h"
#include "sys/clock.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/locks.h"
#include "sys/native.h"
#include "sys/process.h"

namespace gp::apply {

struct ApplyOptions {
  bool yes = false, reboot = false, resume = false, restart_docker = false;
  std::vector<std::string> only, skip;  // layer names, already validated (layers::ParseLayerList)
  int lock_timeout = 600;               // seconds apt waits for its own lock (DPkg::Lock::Timeout)
  std::string callback;                 // --callback URL: POST status.json there when apply ends
  std::string manifest;                 // --manifest as given ("" = the stack cli/target chooses)
};

// The stack and host the sequence runs against, loaded by the caller (cli/target.h LoadTarget).
struct ApplyTarget {
  std::unique_ptr<sys::Fs> fs;  // the live host ("/")
  probe::HostFacts facts;
  manifest::Stack stack;
  std::string manifest;                 // the --manifest spec it was loaded from ("" when not named)
  std::string spec;                     // how to load exactly this stack again (journal, status.json)
  std::optional<manifest::Stack> from;  // the host's recorded stack when it is not `stack` (a move)
};

// Holds the apply lock until destroyed.
using LockHandle = std::shared_ptr<void>;

struct ApplySeams {
  // Whether this process runs as root (effective uid 0). Unset: it does not.
  std::function<bool()> is_root;
  // The UTC clock: status.json's started/finished and the journal's timestamps.
  std::function<std::string()> now = sys::NowUtc;
  // Takes the apply lock without waiting: a handle, or nullptr with `why` ("held by pid N", an open error).
  std::function<LockHandle(sys::Fs&, std::string& why)> lock = [](sys::Fs& fs, std::string& why) {
    return LockHandle(sys::ApplyLock::TryAcquire(fs, why));
  };
  // The live host's Fs ("/"), read for the journal before the stack is loaded.
  std::function<std::unique_ptr<sys::Fs>()> host;
  // Loads the stack named by a manifest spec ("" = the caller's choice) and probes the host. Throws
  // gp::Error(kExitUsage) / gp::FileError for a bad manifest: before any change and before the lock.
  std::function<ApplyTarget(const std::string& manifest)> load;
  // Opens the run's log file once the lock is held; returns what writes an error line to that file only
  // (the same error reaches stderr through main). Unset: no log file.
  std::function<std::function<void(const std::string&)>(sys::Fs&)> open_log;
  // The planner: every layer's plan composed (layers/plan.h BuildPlan). Called once, then again with the
  // preflight's index and the kernel's headers.
  std::function<plan::Plan(const plan::PlanInput&)> plan;
  // What the layers' plans need of the file half of the host beyond what every plan reads (layers/table.h
  // HostReads), read again before every plan. Unset: only what every plan reads.
  std::function<host::Reads(const manifest::Stack&, const probe::HostFacts&)> reads;
  // A verify step's check (layers/table.h VerifyLayer).
  VerifyFn verify;
  sys::CommandRunner* runner = nullptr;  // apt, systemctl, curl (the callback); null: no callback is sent
  sys::NativeLibs* native = nullptr;     // verify steps
  sys::UnixHttp* docker = nullptr;       // the Engine API; null: not reachable
  std::function<std::unique_ptr<sys::HttpClient>()> make_http;  // keys, redist archives (first use only)
  std::string self_path = "/usr/local/bin/gpuprep";             // the resume unit's ExecStart
  bool fresh_verify = false;  // verify cuda, cudnn and nccl in a new process (ExecEnv::fresh_verify)
};

// What the sequence says while it runs; the caller prints it (cli/apply.cc).
struct ApplyOutput {
  // A result line, for stdout: the layers this run leaves alone (--only/--skip, before the first step), then
  // "nothing to do: ...", "done: ..." or "reboot required: ..." (each also logged).
  std::function<void(const std::string& line)> say;
  // apt and download progress lines for a terminal; unset: apt gets no status fd and nothing is drawn.
  std::function<void(const std::string& line)> progress;
  std::function<void()> progress_end;  // after the last step, when `progress` is set
};

enum class ApplyOutcome { kNothingToDo, kDone, kRebootRequired };

struct ApplyResult {
  ApplyOutcome outcome = ApplyOutcome::kDone;
  int exit_code = 0;    // kExitOk, or kExitReboot
  std::string stack;    // the stack the run applied
  std::string message;  // the reboot notice; "" otherwise
};

// Runs the sequence. Returns for exit 0 and 3; throws gp::Error for every other exit (2: bad usage or
// manifest, nothing changed; 1: the lock is held, the preflight or a blocker refused the run before any
// change, or a step failed), after recording status.json wherever the lock was held.
ApplyResult RunApply(ApplyOptions o, ApplySeams& seams, const ApplyOutput& out);

}  // namespace gp::apply
