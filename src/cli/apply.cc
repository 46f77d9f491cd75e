// `gpuprep apply --yes [--reboot] [--resume] [--only L] [--skip L] [--lock-timeout S]`: runs the plan on the
// live host as root; resumable after the reboot a driver needs (apply/executor.h). Exit codes: docs/cli.md.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "apply/executor.h"
#include "apply/journal.h"
#include "apply/preflight.h"
#include "apply/status.h"
#include "apt/availability.h"
#include "apt/index.h"
#include "cli/commands.h"
#include "cli/target.h"
#include "manifest/digest.h"
#include "plan/planner.h"
#include "sys/clock.h"
#include "sys/host_info.h"
#include "sys/locks.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

struct ApplyOptions {
  bool yes = false, reboot = false, resume = false, restart_docker = false;
  std::vector<std::string> only, skip;
  int lock_timeout = 600;
  std::string callback;  // --callback URL: POST status.json there when apply ends
};

// Appends every log line of this run to /var/log/gpuprep.log as well (best effort). Returns a logger that
// writes to the file only (for the final error, which main prints on stderr itself).
std::shared_ptr<spdlog::logger> LogToFile(const sys::Fs& fs) {
  try {
    auto sink =
        std::make_shared<spdlog::sinks::basic_file_sink_mt>(fs.HostPath("/var/log/gpuprep.log"), false);
    sink->set_pattern("%Y-%m-%dT%H:%M:%S%z gpuprep[%P] %l: %v");
    sink->set_level(spdlog::level::debug);
    auto logger = spdlog::default_logger();
    logger->sinks().push_back(sink);
    logger->flush_on(spdlog::level::info);
    auto file_only = std::make_shared<spdlog::logger>("gpuprep-file", sink);
    file_only->flush_on(spdlog::level::info);
    return file_only;
  } catch (const spdlog::spdlog_ex& e) {
    spdlog::warn("cannot write /var/log/gpuprep.log: {}", e.what());
  }
  return std::make_shared<spdlog::logger>("gpuprep-none");
}

std::string SelfPath() { return sys::SelfExecutable("/usr/local/bin/gpuprep"); }

// The stack the host converged to before this run (carried into this run's status.json until it converges).
std::optional<apply::StackRecord> PreviousConverged(const sys::Fs& fs) {
  try {
    if (auto r = apply::ReadStatusRecords(fs)) return r->converged;
  } catch (const Error& e) {
    spdlog::warn("{} (its converged stack is not carried over)", e.what());
  }
  return std::nullopt;
}

// Leaves the run's verdict in /var/lib/gpuprep/status.json and, with --callback, POSTs it (best effort:
// a status file or callback that cannot be written is logged, never changes the exit code).
void RecordStatus(Context& ctx, sys::Fs& fs, const ApplyOptions& o, apply::RunStatus s) {
  s.finished = sys::NowUtc();
  // The host converged to this stack: it is the one doctor, plan and apply use from now on without
  // --manifest.
  if (s.state == "done" || s.state == "nothing-to-do")
    s.converged = apply::StackRecord{s.stack, s.manifest, s.content_hash, s.finished};
  const std::string text = apply::StatusToText(s);
  if (auto w = apply::WriteStatus(fs, s); !w.ok)
    spdlog::warn("cannot write {}: {}", apply::kStatusPath, w.error);
  if (o.callback.empty() || !ctx.runner) return;
  auto res = ctx.runner->Run(apply::CallbackCommand(o.callback, text));
  if (!res.ok())
    spdlog::warn("callback {}: {}", o.callback,
                 res.not_found ? std::string("curl not found")
                               : "curl exited with " + std::to_string(res.exit_code) + ": " +
                                     std::string(Trim(res.err)));
  else
    spdlog::info("status sent to {}", o.callback);
}

int RunApply(Context& ctx, ApplyOptions& o) {
  if (!ctx.opts.root.empty())
    throw FlagError("--root", "apply changes the live host; review a tree with: gpuprep plan --root DIR");
  auto only = plan::ParseLayerList("--only", o.only);
  auto skip = plan::ParseLayerList("--skip", o.skip);
  if (!ctx.root) throw UsageError("apply: must run as root (try: sudo gpuprep apply --yes)");
  if (!o.yes) throw FlagError("--yes", "required to change the host (review first with: gpuprep plan)");
  if (!o.callback.empty())
    if (auto why = apply::CallbackUrlProblem(o.callback); !why.empty()) throw FlagError("--callback", why);

  std::unique_ptr<sys::Fs> host = ctx.make_fs("");
  std::optional<apply::Journal> previous = apply::ReadJournal(*host);
  std::string manifest = ctx.opts.manifest;
  if (o.resume) {
    if (!previous) throw FlagError("--resume", std::string("no journal at ") + apply::kJournalPath);
    if (manifest.empty()) manifest = previous->manifest;
    if (only.empty() && skip.empty()) {
      only = previous->only;
      skip = previous->skip;
    }
  }
  Target t = LoadTarget(ctx, manifest);  // manifest errors: exit 2 before any change
  if (o.resume && o.callback.empty()) o.callback = apply::ReadCallback(*t.fs);

  std::string why;
  auto lock = sys::ApplyLock::TryAcquire(*t.fs, why);
  if (!lock)
    throw Error(kExitFailed,
                std::string("another gpuprep apply is running (") + sys::kLockPath + " " + why + ")");
  auto file_log = LogToFile(*t.fs);
  apply::RunStatus status;
  status.stack = t.stack.name;
  status.manifest = t.spec;
  status.content_hash = manifest::ContentHash(t.stack);
  status.started = sys::NowUtc();
  status.converged = PreviousConverged(*t.fs);

  plan::PlanInput in;
  in.stack = &t.stack;
  in.facts = &t.facts;
  in.fs = t.fs.get();
  in.manifest = t.manifest;
  in.from = t.host_stack_loaded ? &*t.host_stack_loaded : nullptr;  // a move: what it changes
  in.only = only;
  in.skip = skip;
  in.apt.lock_timeout_s = o.lock_timeout;
  in.restart_docker = o.restart_docker;
  in.apt.status_fd = ctx.err_is_tty && !ctx.opts.json && !ctx.opts.quiet;
  const bool pending = previous && previous->state != "done" && previous->stack == t.stack.name;
  if (pending) in.verify_layers = previous->touched_layers;
  // Whether the distribution publishes the running kernel's headers is asked of its sources below, not of
  // the host's lists (which may be months old): until then the plan takes them as installable.
  apt::ListsAnswer headers;
  in.headers = &headers;
  plan::Plan p = plan::BuildPlan(in);
  if (!p.move_from.empty())
    spdlog::info(
        "moving this host from stack {} to {} ({} pinned values change; review them with gpuprep plan)",
        p.move_from, t.stack.name, p.move_changes.size());

  apply::ExecEnv env;
  env.fs = t.fs.get();
  env.runner = ctx.runner;
  env.native = ctx.native;
  env.docker = ctx.unix_http;
  env.make_http = ctx.make_http;
  env.stack = &t.stack;
  env.facts = &t.facts;
  env.reboot = o.reboot;
  env.self_path = SelfPath();
  env.fresh_verify = true;  // a library this process loaded while probing is not the one just installed
  env.manifest = t.manifest;
  // Exact versions come from the repositories' index as it is now, read before the first change: a pin
  // the repository no longer carries stops apply here, with the host as it was.
  apply::PreflightResult fresh;
  if (p.needs_index && p.blockers.empty()) {
    fresh = apply::FetchRepositoryIndex(plan::AptRepositoriesFor(t.stack, t.facts),
                                        apt::DpkgArch(t.facts.arch), env);
    if (!fresh.ok()) {
      const std::string msg = fresh.error + "; nothing was changed";
      file_log->error("{}", msg);
      status.exit_code = kExitFailed;
      status.message = msg;
      status.state = "refused";
      RecordStatus(ctx, *t.fs, o, status);
      throw Error(kExitFailed, msg);
    }
    in.index = &fresh.index;
    p = plan::BuildPlan(in);
  }
  // DKMS needs the running kernel's headers, which come from the distribution, not the stack's
  // repositories: a provider's own kernel, or one so old its archive dropped it, has none, and apt would
  // fail after the repositories were added. Asked of the host's own sources, before any change.
  if (!p.kernel_headers.empty() && p.blockers.empty()) {
    headers = apply::FetchKernelPackageAnswer(p.kernel_headers, env);
    if (headers.state == apt::Availability::kMissing) p = plan::BuildPlan(in);
  }
  if (!p.blockers.empty()) {
    const std::string msg = "refused before any change: " + Join(p.blockers, "; ");
    file_log->error("{}", msg);
    status.exit_code = kExitFailed;
    status.message = msg;
    status.state = "refused";
    status.layers = apply::LayerVerdicts(p, apply::Journal{}, kExitFailed);
    RecordStatus(ctx, *t.fs, o, status);
    throw Error(kExitFailed, msg);
  }

  // --only/--skip: what this run does not touch, said before it starts (their holds and pins stay too).
  if (!p.left_alone.empty()) {
    const std::string left = "left alone: " + Join(p.left_alone, ", ") +
                             " (not selected: their packages, holds and pins stay as they are)";
    spdlog::info("{}", left);
    *ctx.out << left << "\n";
  }
  const bool resume_unit = t.fs->Exists(apply::kResumeUnitPath);
  if (p.empty() && p.blockers.empty() && !p.refused() && !pending && !resume_unit) {
    spdlog::info("nothing to do: the host matches stack {}", t.stack.name);
    *ctx.out << "nothing to do: the host matches stack " << t.stack.name << "\n";
    status.state = "nothing-to-do";
    status.layers = apply::LayerVerdicts(p, apply::Journal{}, kExitOk);
    RecordStatus(ctx, *t.fs, o, status);
    return kExitOk;
  }

  apply::Journal journal = pending ? *previous : apply::Journal{};
  journal.manifest = t.spec;  // --resume loads exactly this stack again
  journal.stack = t.stack.name;
  journal.only = only;
  journal.skip = skip;
  if (in.apt.status_fd)
    env.progress = [&ctx](const std::string& line) {
      *ctx.err << "\rgpuprep: "
               << (line.rfind("pulling ", 0) == 0 || line.rfind("downloading ", 0) == 0 ? "" : "apt: ")
               << line << "\033[K" << std::flush;
    };
  auto result = apply::Execute(p, journal, env);
  if (in.apt.status_fd) *ctx.err << "\r\033[K" << std::flush;
  status.exit_code = result.exit_code;
  status.message = result.message;
  status.state = result.exit_code == kExitOk       ? "done"
                 : result.exit_code == kExitReboot ? "reboot-required"
                                                   : "failed";
  status.layers = apply::LayerVerdicts(p, journal, result.exit_code);
  RecordStatus(ctx, *t.fs, o, status);
  if (auto w = apply::SaveCallback(*t.fs, result.exit_code == kExitReboot ? o.callback : ""); !w.ok)
    spdlog::warn("cannot write {}: {}", apply::kCallbackPath, w.error);
  if (result.exit_code == kExitOk) {
    spdlog::info("done: the host matches stack {}", t.stack.name);
    *ctx.out << "done: the host matches stack " << t.stack.name << "\n";
  } else if (result.exit_code == kExitReboot) {
    spdlog::warn("{}", result.message);
    *ctx.out << "reboot required: " << result.message << "\n";
  } else {
    file_log->error("{}", result.message);
    throw Error(kExitFailed, result.message);
  }
  return result.exit_code;
}

}  // namespace

void RegisterApply(CLI::App& app, Context& ctx, int& exit_code) {
  auto o = std::make_shared<ApplyOptions>();
  CLI::App* sub = app.add_subcommand(
      "apply", "Install what the stack needs on this host (root), verify, resume after reboot");
  sub->add_flag("--yes", o->yes, "Really change the host (required)");
  sub->add_flag("--reboot", o->reboot,
                "Reboot by itself when the driver needs it (the resume unit continues)");
  sub->add_flag("--resume", o->resume, "Continue the run recorded in /var/lib/gpuprep/journal.json");
  sub->add_option("--only", o->only, "Only these layers (repeatable, or comma-separated)");
  sub->add_option("--skip", o->skip, "Leave these layers out (repeatable, or comma-separated)");
  sub->add_flag("--restart-docker", o->restart_docker,
                "Allow restarting Docker when a daemon.json change needs it although containers are running");
  sub->add_option("--lock-timeout", o->lock_timeout, "Seconds to wait for the apt/dpkg lock (default 600)")
      ->check(CLI::Range(0, 86400));
  sub->add_option(
      "--callback", o->callback,
      "POST /var/lib/gpuprep/status.json to this https URL when apply ends (http only to 127.0.0.1/[::1])");
  sub->callback([&ctx, &exit_code, o] { exit_code = RunApply(ctx, *o); });
}

}  // namespace gp::cli
