// /var/lib/gpuprep/status.json: the outcome of the last `gpuprep apply`, where an operator, cloud-init or a
// fleet script looks after first boot (the journal is the step-by-step record; this is the verdict).
// Written atomically at every exit of apply past the lock; optionally POSTed to an HTTPS callback.
#pragma once
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

struct RunStatus {
  std::string stack, manifest;
  std::string state;              // "done" | "reboot-required" | "failed" | "nothing-to-do"
  int exit_code = 0;              // the exit code apply returns (docs/cli.md)
  std::string message;            // the one-line error or reboot notice; "" on success
  std::string started, finished;  // UTC, ISO 8601
  std::vector<LayerVerdict> layers;
};

// One verdict per layer the plan decided on, from the plan's decisions and the journal's step records.
std::vector<LayerVerdict> LayerVerdicts(const plan::Plan& plan, const Journal& journal, int exit_code);

// {"gpuprep","stack","manifest","state","exit_code","message","started","finished","layers":[{name,verdict,detail}]}
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
