// Runs a plan (plan/plan.h) on a host: every step through the Fs and CommandRunner seams, the journal
// rewritten after each step, the resume unit installed when a reboot is required. Unit tests hand it a
// DiskFs over a temp dir and a FakeCommandRunner; it never touches "/" by itself.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "apply/journal.h"
#include "apply/verify.h"
#include "manifest/model.h"
#include "plan/plan.h"
#include "probe/host.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/process.h"

namespace gp::apply {

inline constexpr const char* kResumeUnit = "gpuprep-resume.service";
inline constexpr const char* kResumeUnitPath = "/etc/systemd/system/gpuprep-resume.service";

struct ExecEnv {
  sys::Fs* fs = nullptr;
  sys::CommandRunner* runner = nullptr;
  sys::NativeLibs* native = nullptr;  // verify steps
  VerifyFn verify;  // a verify step's check (layers::VerifyLayer); unset: a verify step fails
  std::function<std::unique_ptr<sys::HttpClient>()> make_http;  // created on the first download only
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;
  bool reboot = false;  // --reboot: `systemctl reboot` after installing the resume unit
  std::string self_path = "/usr/local/bin/gpuprep";  // ExecStart of the resume unit
  // Verify cuda, cudnn and nccl in a new `self_path ... verify --only LAYER` process (apply/verify_fresh.h),
  // reading `manifest` as this run did ("" = the default choice). false: in this process (unit tests).
  bool fresh_verify = false;
  std::string manifest;
  std::function<void(const std::string&)> progress;  // apt progress lines (terminal only); may be empty
  std::function<std::string()> now;                  // UTC timestamp for the journal; default: the clock
  sys::UnixHttp* docker = nullptr;  // the Engine API (image pulls, container verify); null: not reachable
};

struct ExecResult {
  int exit_code = 0;    // 0 done, 1 a step failed / a layer refused, 3 reboot required
  std::string message;  // one line for "gpuprep: error:" or the reboot notice; "" on success
};

// Runs `plan` and records it in `journal` (whose manifest/stack/only/skip the caller has set). The caller
// holds the ApplyLock.
ExecResult Execute(const plan::Plan& plan, Journal& journal, ExecEnv& env);

// The resume unit for `self_path`, from templates/gpuprep-resume.service.
std::string ResumeUnitText(const std::string& self_path);

}  // namespace gp::apply
