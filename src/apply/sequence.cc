#include "apply/sequence.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "apply/executor.h"
#include "apply/journal.h"
#include "apply/preflight.h"
#include "apply/status.h"
#include "apt/availability.h"
#include "apt/index.h"
#include "manifest/digest.h"
#include "plan/planner.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::apply {
namespace {

class Sequence {
 public:
  Sequence(ApplyOptions o, ApplySeams& seams, const ApplyOutput& out)
      : o_(std::move(o)), seams_(seams), out_(out) {}

  ApplyResult Run() {
    Refusals();
    std::unique_ptr<sys::Fs> host = seams_.host();
    previous_ = ReadJournal(*host);
    std::string manifest = o_.manifest;
    if (o_.resume) {
      if (!previous_) throw FlagError("--resume", std::string("no journal at ") + kJournalPath);
      if (manifest.empty()) manifest = previous_->manifest;
      if (o_.only.empty() && o_.skip.empty()) {
        o_.only = previous_->only;
        o_.skip = previous_->skip;
      }
    }
    t_ = seams_.load(manifest);  // manifest errors: exit 2 before any change
    if (o_.resume && o_.callback.empty()) o_.callback = ReadCallback(*t_.fs);

    std::string why;
    const LockHandle lock = seams_.lock(*t_.fs, why);
    if (!lock)
      throw Error(kExitFailed,
                  std::string("another gpuprep apply is running (") + sys::kLockPath + " " + why + ")");
    if (seams_.open_log) log_error_ = seams_.open_log(*t_.fs);
    status_.stack = t_.stack.name;
    status_.manifest = t_.spec;
    status_.content_hash = manifest::ContentHash(t_.stack);
    status_.started = seams_.now();
    status_.converged = PreviousConverged();
    return Apply();
  }

 private:
  // What is refused before anything is read: the run needs root, --yes, and a callback URL it may use.
  void Refusals() const {
    if (!seams_.is_root || !seams_.is_root())
      throw UsageError("apply: must run as root (try: sudo gpuprep apply --yes)");
    if (!o_.yes) throw FlagError("--yes", "required to change the host (review first with: gpuprep plan)");
    if (!o_.callback.empty())
      if (auto why = CallbackUrlProblem(o_.callback); !why.empty()) throw FlagError("--callback", why);
  }

  ApplyResult Apply() {
    plan::PlanInput in;
    const bool pending = previous_ && previous_->state != "done" && previous_->stack == t_.stack.name;
    PlanInputs(pending, in);
    // The host state each plan reads, read again before every re-plan (apply's answers on the kernel packages
    // are asked of the distribution below, so the host's lists are not searched for them).
    plan::HostState host;
    host::Reads reads = seams_.reads ? seams_.reads(t_.stack, t_.facts) : host::Reads{};
    reads.kernel_lists = false;
    auto plan_now = [&] {
      reads.lists = !in.index;
      host = host::ReadFiles(*t_.fs, t_.stack, t_.facts, reads);
      in.host = &host;
      return seams_.plan(in);
    };
    // Whether the distribution publishes the kernel packages the plan adds (the running kernel's headers,
    // its extra modules) is asked of its sources below, not of the host's lists (which may be months old):
    // until then the plan takes them as installable.
    std::map<std::string, apt::ListsAnswer> kernel_packages;
    in.kernel_packages = &kernel_packages;
    plan::Plan p = plan_now();
    if (!p.move_from.empty())
      spdlog::info(
          "moving this host from stack {} to {} ({} pinned values change; review them with gpuprep plan)",
          p.move_from, t_.stack.name, p.move_changes.size());

    ExecEnv env = Env();
    // Exact versions come from the repositories' index as it is now, read before the first change: a pin
    // the repository no longer carries stops apply here, with the host as it was.
    PreflightResult fresh;
    if (p.needs_index && p.blockers.empty()) {
      fresh = FetchRepositoryIndex(plan::AptRepositoriesFor(t_.stack, t_.facts), apt::DpkgArch(t_.facts.arch),
                                   env);
      if (!fresh.ok()) Refuse(fresh.error + "; nothing was changed", nullptr);
      in.index = &fresh.index;
      p = plan_now();
    }
    if (!p.kernel_packages.empty() && p.blockers.empty() && KernelPackageMissing(p, env, kernel_packages))
      p = plan_now();
    if (!p.blockers.empty()) Refuse("refused before any change: " + Join(p.blockers, "; "), &p);
    SayLeftAlone(p);
    const bool resume_unit = t_.fs->Exists(kResumeUnitPath);
    if (p.empty() && p.blockers.empty() && !p.refused() && !pending && !resume_unit) return NothingToDo(p);
    return Execute(p, pending, env);
  }

  // What every plan of this run is asked with (`pending`: the journal of an unfinished run on this stack,
  // whose layers are verified again).
  void PlanInputs(bool pending, plan::PlanInput& in) const {
    in.stack = &t_.stack;
    in.facts = &t_.facts;
    in.manifest = t_.manifest;
    in.from = t_.from ? &*t_.from : nullptr;  // a move: what it changes
    in.only = o_.only;
    in.skip = o_.skip;
    in.apt.lock_timeout_s = o_.lock_timeout;
    in.restart_docker = o_.restart_docker;
    in.apt.status_fd = static_cast<bool>(out_.progress);
    if (pending) in.verify_layers = previous_->touched_layers;
  }

  // DKMS needs the running kernel's headers (and NVLSM on HGX Blackwell its ib_umad module), which come
  // from the distribution, not the stack's repositories: a provider's own kernel, or one so old its
  // archive dropped it, has none, and apt would fail after the repositories were added. Asked of the
  // host's own sources, before any change, into `answers`; true when one is missing (the plan is then made
  // again with the answers).
  static bool KernelPackageMissing(const plan::Plan& p, ExecEnv& env,
                                   std::map<std::string, apt::ListsAnswer>& answers) {
    answers = FetchKernelPackageAnswers(p.kernel_packages, env);
    for (const auto& [name, answer] : answers)
      if (answer.state == apt::Availability::kMissing) return true;
    return false;
  }

  // --only/--skip: what this run does not touch, said before it starts (their holds and pins stay too).
  void SayLeftAlone(const plan::Plan& p) const {
    if (p.left_alone.empty()) return;
    const std::string left = "left alone: " + Join(p.left_alone, ", ") +
                             " (not selected: their packages, holds and pins stay as they are)";
    spdlog::info("{}", left);
    Say(left);
  }

  // The host already matches the stack: recorded as such, nothing run.
  ApplyResult NothingToDo(const plan::Plan& p) {
    spdlog::info("nothing to do: the host matches stack {}", t_.stack.name);
    Say("nothing to do: the host matches stack " + t_.stack.name);
    status_.state = "nothing-to-do";
    status_.layers = LayerVerdicts(p, Journal{}, kExitOk);
    Record();
    return {ApplyOutcome::kNothingToDo, kExitOk, t_.stack.name, ""};
  }

  ApplyResult Execute(const plan::Plan& p, bool pending, ExecEnv& env) {
    Journal journal = pending ? *previous_ : Journal{};
    journal.manifest = t_.spec;  // --resume loads exactly this stack again
    journal.stack = t_.stack.name;
    journal.only = o_.only;
    journal.skip = o_.skip;
    env.progress = out_.progress;
    auto result = apply::Execute(p, journal, env);
    if (out_.progress && out_.progress_end) out_.progress_end();
    status_.exit_code = result.exit_code;
    status_.message = result.message;
    status_.state = result.exit_code == kExitOk       ? "done"
                    : result.exit_code == kExitReboot ? "reboot-required"
                                                      : "failed";
    status_.layers = LayerVerdicts(p, journal, result.exit_code);
    Record();
    if (auto w = SaveCallback(*t_.fs, result.exit_code == kExitReboot ? o_.callback : ""); !w.ok)
      spdlog::warn("cannot write {}: {}", kCallbackPath, w.error);
    if (result.exit_code == kExitOk) {
      spdlog::info("done: the host matches stack {}", t_.stack.name);
      Say("done: the host matches stack " + t_.stack.name);
      return {ApplyOutcome::kDone, kExitOk, t_.stack.name, ""};
    }
    if (result.exit_code == kExitReboot) {
      spdlog::warn("{}", result.message);
      Say("reboot required: " + result.message);
      return {ApplyOutcome::kRebootRequired, kExitReboot, t_.stack.name, result.message};
    }
    LogError(result.message);
    throw Error(kExitFailed, result.message);
  }

  ExecEnv Env() {
    ExecEnv env;
    env.fs = t_.fs.get();
    env.runner = seams_.runner;
    env.native = seams_.native;
    env.verify = seams_.verify;
    env.docker = seams_.docker;
    env.make_http = seams_.make_http;
    env.stack = &t_.stack;
    env.facts = &t_.facts;
    env.reboot = o_.reboot;
    env.self_path = seams_.self_path;
    // A library this process loaded while probing is not the one just installed.
    env.fresh_verify = seams_.fresh_verify;
    env.manifest = t_.manifest;
    env.now = seams_.now;
    return env;
  }

  // Stops the run before any change: status.json says so (with the plan's layer verdicts when there is a
  // plan), then exit 1.
  [[noreturn]] void Refuse(const std::string& msg, const plan::Plan* p) {
    LogError(msg);
    status_.exit_code = kExitFailed;
    status_.message = msg;
    status_.state = "refused";
    if (p) status_.layers = LayerVerdicts(*p, Journal{}, kExitFailed);
    Record();
    throw Error(kExitFailed, msg);
  }

  void Say(const std::string& line) const {
    if (out_.say) out_.say(line);
  }

  void LogError(const std::string& msg) const {
    if (log_error_) log_error_(msg);
  }

  // The stack the host converged to before this run (carried into this run's status.json until it
  // converges).
  std::optional<StackRecord> PreviousConverged() const {
    try {
      if (auto r = ReadStatusRecords(*t_.fs)) return r->converged;
    } catch (const Error& e) {
      spdlog::warn("{} (its converged stack is not carried over)", e.what());
    }
    return std::nullopt;
  }

  // Leaves the run's verdict in /var/lib/gpuprep/status.json and, with --callback, POSTs it (best effort:
  // a status file or callback that cannot be written is logged, never changes the exit code).
  void Record() {
    RunStatus& s = status_;
    s.finished = seams_.now();
    // The host converged to this stack: it is the one doctor, plan and apply use from now on without
    // --manifest.
    if (s.state == "done" || s.state == "nothing-to-do")
      s.converged = StackRecord{s.stack, s.manifest, s.content_hash, s.finished};
    const std::string text = StatusToText(s);
    if (auto w = WriteStatus(*t_.fs, s); !w.ok) spdlog::warn("cannot write {}: {}", kStatusPath, w.error);
    if (o_.callback.empty() || !seams_.runner) return;
    auto res = seams_.runner->Run(CallbackCommand(o_.callback, text));
    if (!res.ok())
      spdlog::warn("callback {}: {}", o_.callback,
                   res.not_found ? std::string("curl not found")
                                 : "curl exited with " + std::to_string(res.exit_code) + ": " +
                                       std::string(Trim(res.err)));
    else
      spdlog::info("status sent to {}", o_.callback);
  }

  ApplyOptions o_;
  ApplySeams& seams_;
  const ApplyOutput& out_;
  std::optional<Journal> previous_;
  ApplyTarget t_;
  RunStatus status_;
  std::function<void(const std::string&)> log_error_;
};

}  // namespace

ApplyResult RunApply(ApplyOptions o, ApplySeams& seams, const ApplyOutput& out) {
  if (!seams.plan || !seams.verify)
    throw Error(kExitFailed, "apply: no planner or verify function was given");
  return Sequence(std::move(o), seams, out).Run();
}

}  // namespace gp::apply
