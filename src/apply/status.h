// /var/lib/gpuprep/status.json: the outcome of the last `gpuprep apply`, where an operator, cloud-init or a
// fleet script looks after first boot (the journal is the step-by-step record; this is the verdict).
// Written atomically at every exit of apply past the lock; optionally POSTed to an HTTPS callback.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "apply/journal.h"
#include "plan/plan.h"
#include "sys/fs.h"
#include "sys/process.h"

namespace gp::apply {

inline constexpr const char* kStatusPath = "/var/lib/gpuprep/status.json";
// The --callback URL of a run that stopped for a reboot, for the resumed run (0600: it may carry a token).
inline constexpr const char* kCallbackPath = "/var/lib/gpuprep/callback";

struct LayerVerdict {
  std::string name;
  // "ok" (nothing to do), "installed", "reboot-required" (installed, the driver waits for the reboot),
  // "failed", "pending" (not reached), "refused", "skipped", "n/a"
  std::string verdict;
  std::string detail;
};

// A stack as status.json records it: enough to load exactly it again and to tell whether it changed.
struct StackRecord {
  std::string stack;         // metadata.name
  std::string manifest;      // how to load it: an embedded NAME, an absolute PATH or an https URL
  std::string content_hash;  // manifest::ContentHash ("sha256:..."); "" in a status.json of an older gpuprep
  std::string finished;      // when apply ended on it (converged records), UTC
};

struct RunStatus {
  std::string stack, manifest;    // the run's stack and how it was loaded (StackRecord::manifest)
  std::string content_hash;       // the run's stack's manifest::ContentHash
  std::string state;              // "done" | "reboot-required" | "failed" | "nothing-to-do" | "refused"
  int exit_code = 0;              // the exit code apply returns (docs/cli.md)
  std::string message;            // the one-line error or reboot notice; "" on success
  std::string started, finished;  // UTC, ISO 8601
  std::vector<LayerVerdict> layers;
  // The stack the host last converged to (a run that ended "done" or "nothing-to-do"): this run's stack when
  // it converged, else carried over from the previous status.json. nullopt: the host never converged.
  std::optional<StackRecord> converged;
};

// The stack this host runs, from status.json: what doctor, plan and apply use without --manifest.
//  - the converged record, unless the last run took the host towards another stack and changed something
//    (state reboot-required or failed): then that run's stack, so an interrupted move is finished, not
//    undone;
//  - no converged record (a run that has not converged yet, or a status.json written by an older gpuprep):
//    the last run's stack (its manifest, or its name when it was the embedded default).
struct HostStack {
  StackRecord record;
  bool converged = false;  // the record is the converged one
  std::string state;       // the last run's state
};
// nullopt when there is no status.json. Throws gp::Error(kExitUsage) "PATH: ..." when it cannot be read or
// its stack record is malformed (names, paths, URLs and hashes are validated: the file is host input).
std::optional<HostStack> ReadHostStack(const sys::Fs& fs);

// The records of status.json as written: the last run's stack and state, and the converged stack.
struct StatusRecords {
  StackRecord last;
  std::string state;
  std::optional<StackRecord> converged;
};
std::optional<StatusRecords> ReadStatusRecords(const sys::Fs& fs);  // nullopt / throws as ReadHostStack
std::optional<HostStack> HostStackOf(const StatusRecords& r);       // the rule of ReadHostStack

// One verdict per layer the plan decided on, from the plan's decisions and the journal's step records.
std::vector<LayerVerdict> LayerVerdicts(const plan::Plan& plan, const Journal& journal, int exit_code);

// {"gpuprep","stack","manifest","content_hash","state","exit_code","message","started","finished",
//  "layers":[{name,verdict,detail}],"converged":{stack,manifest,content_hash,finished}|null}
std::string StatusToText(const RunStatus& s);

sys::WriteResult WriteStatus(sys::Fs& fs, const RunStatus& s);

// Remembers `url` for `apply --resume` ("" removes it). ReadCallback: "" when none or no longer valid.
sys::WriteResult SaveCallback(sys::Fs& fs, const std::string& url);
std::string ReadCallback(const sys::Fs& fs);

// The callback URL is validated where it enters (the --callback flag): https, or http to a literal loopback
// address (127.0.0.1, [::1]); no user info, no blanks or control characters, at most 2048 bytes.
// Returns "" when valid, else the reason.
std::string CallbackUrlProblem(const std::string& url);

// The argv that POSTs the status document (given on stdin) to `url` with curl: no redirects, https only
// except loopback http, a 30 s limit.
sys::Command CallbackCommand(const std::string& url, const std::string& body);

}  // namespace gp::apply
