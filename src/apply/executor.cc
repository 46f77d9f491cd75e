#include "apply/executor.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <optional>

#include "apply/image_pull.h"
#include "apply/keys.h"
#include "apply/verify.h"
#include "apply/verify_fresh.h"
#include "apt/commands.h"
#include "apt/keyring.h"
#include "host/files.h"
#include "plan/host_state.h"
#include "probe/state.h"
#include "redist/install.h"
#include "sys/clock.h"
#include "sys/locks.h"
#include "sys/sha256.h"
#include "util/embedded.h"
#include "util/strings.h"

namespace gp::apply {
namespace {

using plan::Action;

class Executor {
 public:
  Executor(const plan::Plan& plan, Journal& journal, ExecEnv& env)
      : plan_(plan), journal_(journal), env_(env) {
    if (!env_.now) env_.now = sys::NowUtc;
  }

  ExecResult Run() {
    if (!plan_.blockers.empty()) return {1, Join(plan_.blockers, "; ")};
    journal_.state = "running";
    if (journal_.started.empty()) journal_.started = env_.now();
    if (!Save()) return {1, save_error_};
    for (const auto& step : plan_.steps) {
      spdlog::info("{} [{}]", step.title, step.id);
      std::string error;
      bool reboot = false;
      // An install that fails before dpkg touched anything (a download refused by apt's checksum, a
      // resolver error) leaves the host as it was: this run's sources and pins are taken back too.
      const std::optional<std::string> dpkg_before =
          step.id == "apt.install" ? env_.fs->Read("/var/lib/dpkg/status") : std::nullopt;
      for (const auto& a : step.actions) {
        error = Do(a, reboot);
        if (!error.empty() || reboot) break;
      }
      if (reboot) return Reboot(step);
      Record(step, error.empty() ? "done" : "failed", error);
      if (step.id == "apt.install" && (error.empty() || env_.fs->Read("/var/lib/dpkg/status") != dpkg_before))
        undo_.clear();  // packages changed: from here on the repositories and pins stay configured
      if (!error.empty()) {
        Undo();
        journal_.state = "failed";
        Save();
        return {1, step.id + ": " + error};
      }
      if (!Save()) return {1, save_error_};
    }
    auto refusals = plan_.Refusals();
    if (!refusals.empty()) {
      journal_.state = "failed";
      Save();
      return {1, "refused " + Join(refusals, "; ")};
    }
    journal_.state = "done";
    journal_.reboot_reason.clear();
    journal_.touched_layers.clear();
    if (!Save()) return {1, save_error_};
    RemoveResumeUnit();
    return {0, ""};
  }

 private:
  bool Save() {
    journal_.updated = env_.now();
    auto r = WriteJournal(*env_.fs, journal_);
    if (!r.ok) save_error_ = "cannot write the journal: " + r.error;
    return r.ok;
  }

  void Record(const plan::Step& step, const std::string& status, const std::string& detail) {
    journal_.steps.push_back({step.id, step.layers, status, env_.now(), detail});
    journal_.Touch(step.layers);
  }

  // Until the install transaction has run, every file change can be taken back, so a repository that
  // fails apt's signature check (or a write error) leaves the host as it was.
  void RememberFile(const std::string& path) {
    auto old = env_.fs->Read(path);
    sys::Fs* fs = env_.fs;
    if (old)
      undo_.push_back([fs, path, contents = *old] { fs->WriteAtomic(path, contents, 0644, false); });
    else
      undo_.push_back([fs, path] { fs->Remove(path); });
  }

  void Undo() {
    if (undo_.empty()) return;
    spdlog::info("undoing this run's changes to apt sources");
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
    undo_.clear();
  }

  // Returns "" on success, else one line saying what failed. Sets `reboot` for a required reboot.
  std::string Do(const Action& a, bool& reboot) {
    switch (a.kind) {
      case Action::Kind::kRun:
        return RunCommand(a);
      case Action::Kind::kWrite: {
        RememberFile(a.path);
        auto r = env_.fs->WriteAtomic(a.path, a.contents, a.mode, a.keep_backup);
        return r.ok ? "" : r.error;
      }
      case Action::Kind::kMove: {
        auto r = env_.fs->Rename(a.path, a.to);
        if (r.ok) {
          sys::Fs* fs = env_.fs;
          undo_.push_back([fs, from = a.path, to = a.to] { fs->Rename(to, from); });
          spdlog::info("moved {} aside to {}", a.path, a.to);
        }
        return r.ok ? "" : r.error;
      }
      case Action::Kind::kFetch:
        return Fetch(a);
      case Action::Kind::kRedist:
        return Redist(a);
      case Action::Kind::kVerify: {
        if (env_.fresh_verify && VerifiesInFreshProcess(a.layer)) {
          const auto r =
              VerifyInFreshProcess(*env_.runner, FreshVerifyArgv(env_.self_path, env_.manifest, a.layer));
          if (!r.ok) return r.detail;
          spdlog::info("verified {} in a new process: {}", a.layer, r.detail);
          return "";
        }
        if (!env_.verify) return "no verify function for layer " + a.layer;
        VerifyEnv v{env_.fs, env_.native, env_.stack, env_.facts, env_.docker};
        auto report = env_.verify(a.layer, v);
        if (report.status == verdict::Status::kFail) {
          std::vector<std::string> failed;  // the failing findings only: what the operator must act on
          for (const auto& f : report.findings)
            if (f.status == verdict::Status::kFail) failed.push_back(f.message);
          return Join(failed, "; ") + (report.fix ? " (fix: " + *report.fix + ")" : "");
        }
        spdlog::info("verified {}: {}", a.layer, report.detail);
        return "";
      }
      case Action::Kind::kPull:
        return PullImage(a, env_);  // apply/image_pull.cc
      case Action::Kind::kRebootCheck: {
        reboot_reasons_ = plan::RebootReasons(host::ReadRebootState(*env_.fs), *env_.stack);
        reboot = !reboot_reasons_.empty();
        return "";
      }
    }
    return "unknown action";
  }

  std::string RunCommand(const Action& a) {
    sys::Command cmd;
    cmd.argv = a.argv;
    cmd.env = a.env;
    cmd.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(a.timeout);
    const bool apt =
        !a.argv.empty() && (a.argv[0] == "apt-get" || a.argv[0] == "dpkg" || a.argv[0] == "apt-mark");
    if (apt) {
      if (auto holder = sys::AptLockHolder(*env_.fs)) {
        std::string timeout = "a while";
        for (const auto& w : a.argv)
          if (StartsWith(w, "DPkg::Lock::Timeout=")) timeout = w.substr(20) + " s";
        spdlog::warn("waiting for the apt lock held by {}, up to {}", *holder, timeout);
      }
    }
    if (a.apt_progress && Contains(a.argv, "APT::Status-Fd=" + std::to_string(apt::kStatusFd))) {
      cmd.status_fd = apt::kStatusFd;
      cmd.on_status_line = [this](const std::string& line) {
        std::string text = apt::ProgressText(line);
        if (!text.empty() && env_.progress) env_.progress(text);
      };
    }
    spdlog::debug("running: {}", sys::ShellJoin(a.argv));
    auto res = env_.runner->Run(cmd);
    if (res.ok()) return "";
    if (res.not_found) return a.argv[0] + ": not found";
    if (res.timed_out)
      return sys::ShellJoin(a.argv) + ": timed out after " + std::to_string(a.timeout.count()) + " s";
    std::string why = LastLine(res.err);
    if (why.empty()) why = LastLine(res.out);
    if (!res.err.empty()) spdlog::debug("{} stderr:\n{}", a.argv[0], res.err);
    return sys::ShellJoin(a.argv) + " exited with " + std::to_string(res.exit_code) +
           (why.empty() ? "" : ": " + why);
  }

  std::string Fetch(const Action& a) {
    if (!http_) {
      if (env_.make_http) http_ = env_.make_http();
      if (!http_) return "no HTTP client available to fetch " + a.url;
    }
    auto got = DownloadKey(a.url, a.sha256, a.fingerprint, *env_.fs, *env_.runner, *http_);
    if (!got.ok()) return got.error;
    RememberFile(a.path);
    auto w = env_.fs->WriteAtomic(a.path, got.key, a.mode, true);
    if (!w.ok) return w.error;
    spdlog::info("installed key {} (verified {})", a.path, a.sha256.empty() ? "by fingerprint" : "by sha256");
    return "";
  }

  std::string Redist(const Action& a) {
    if (!http_) {
      if (env_.make_http) http_ = env_.make_http();
      if (!http_) return "no HTTP client available to fetch " + a.redist.json_url;
    }
    redist::InstallOptions opt;
    opt.progress = [](const std::string& line) { spdlog::info("{}", line); };
    opt.bytes = [this](const std::string& name, uint64_t done, uint64_t total) {
      const int pct = static_cast<int>(done * 100 / total);
      if (env_.progress)  // a terminal: one line redrawn in place, with a bar
        return env_.progress("downloading " + name + " [" + std::string(pct / 5, '#') +
                             std::string(20 - pct / 5, '.') + "] " + std::to_string(pct) + "% of " +
                             std::to_string(total >> 20) + " MiB");
      if (pct % 10 == 0 && pct < 100)  // a log: a line per 10%; the end is reported as installed
        spdlog::info("downloading {}: {}% ({} of {} bytes)", name, pct, done, total);
    };
    auto r = redist::Install(a.redist, *env_.fs, *http_, opt);
    if (!r.ok()) return r.error;
    spdlog::info("installed {} ({} bytes{}); {} -> {}{}", r.prefix, r.bytes,
                 r.resumes ? ", resumed " + std::to_string(r.resumes) + " time(s)" : "",
                 a.redist.current_link, r.prefix.substr(r.prefix.rfind('/') + 1),
                 r.previous.empty() ? "" : " (previous " + r.previous + " kept)");
    return "";
  }

  ExecResult Reboot(const plan::Step& step) {
    const std::string reason = Join(reboot_reasons_, "; ");
    Record(step, "done", "reboot required: " + reason);
    journal_.state = "reboot-required";
    journal_.reboot_reason = reason;
    if (!Save()) return {1, save_error_};
    const std::string unit = ResumeUnitText(env_.self_path);
    if (env_.fs->Read(kResumeUnitPath) != unit) {  // our own file: no backup beside it in /etc/systemd/system
      auto w = env_.fs->WriteAtomic(kResumeUnitPath, unit, 0644, false);
      if (!w.ok) return {1, "cannot install the resume unit: " + w.error};
    }
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"systemctl", "daemon-reload"},
          std::vector<std::string>{"systemctl", "enable", kResumeUnit}}) {
      Action a = Action::Run(argv);
      a.timeout = std::chrono::seconds(60);
      if (auto err = RunCommand(a); !err.empty()) return {1, "cannot enable the resume unit: " + err};
    }
    if (env_.reboot) {
      spdlog::warn("rebooting now: {}", reason);
      Action a = Action::Run({"systemctl", "reboot"});
      a.timeout = std::chrono::seconds(60);
      if (auto err = RunCommand(a); !err.empty()) return {1, "cannot reboot: " + err};
      return {3, "rebooting: " + reason + "; " + kResumeUnit + " resumes after boot"};
    }
    return {3, "a reboot is required (" + reason + "); reboot, and " + kResumeUnit +
                   " resumes after boot (or run: gpuprep apply --resume --yes)"};
  }

  void RemoveResumeUnit() {
    if (!env_.fs->Exists(kResumeUnitPath) && !probe::UnitEnabled(*env_.fs, kResumeUnit)) return;
    Action a = Action::Run({"systemctl", "disable", kResumeUnit});
    a.timeout = std::chrono::seconds(60);
    if (auto err = RunCommand(a); !err.empty()) spdlog::warn("cannot disable {}: {}", kResumeUnit, err);
    env_.fs->Remove(kResumeUnitPath);
    spdlog::info("removed {}", kResumeUnitPath);
  }

  const plan::Plan& plan_;
  Journal& journal_;
  ExecEnv& env_;
  std::unique_ptr<sys::HttpClient> http_;
  std::vector<std::string> reboot_reasons_;
  std::vector<std::function<void()>> undo_;
  std::string save_error_;
};

}  // namespace

std::string ResumeUnitText(const std::string& self_path) {
  const EmbeddedFile* f = FindEmbedded("templates/gpuprep-resume.service");
  std::string text = f ? std::string(f->data, f->size) : "";
  const std::string token = "@GPUPREP@";
  for (size_t p = text.find(token); p != std::string::npos; p = text.find(token, p + self_path.size()))
    text.replace(p, token.size(), self_path);
  return text;
}

ExecResult Execute(const plan::Plan& plan, Journal& journal, ExecEnv& env) {
  return Executor(plan, journal, env).Run();
}

}  // namespace gp::apply
