// `gpuprep apply --yes [--reboot] [--resume] [--only L] [--skip L] [--lock-timeout S]`: runs the plan on the
// live host as root; resumable after the reboot a driver needs. The flags and the printing are here; the
// sequence itself is apply/sequence.h. Exit codes: docs/cli.md.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "apply/sequence.h"
#include "cli/commands.h"
#include "cli/target.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/planner.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {

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

int RunApply(Context& ctx, apply::ApplyOptions& o) {
  if (!ctx.opts.root.empty())
    throw FlagError("--root", "apply changes the live host; review a tree with: gpuprep plan --root DIR");
  o.only = layers::ParseLayerList("--only", o.only);
  o.skip = layers::ParseLayerList("--skip", o.skip);
  o.manifest = ctx.opts.manifest;

  apply::ApplySeams seams;
  seams.is_root = [&ctx] { return ctx.root; };
  seams.host = [&ctx] { return ctx.make_fs(""); };
  seams.load = [&ctx](const std::string& manifest) {
    Target t = LoadTarget(ctx, manifest);
    apply::ApplyTarget a;
    a.fs = std::move(t.fs);
    a.facts = std::move(t.facts);
    a.stack = std::move(t.stack);
    a.manifest = std::move(t.manifest);
    a.spec = std::move(t.spec);
    a.from = std::move(t.host_stack_loaded);
    return a;
  };
  seams.open_log = [](sys::Fs& fs) -> std::function<void(const std::string&)> {
    auto file_log = LogToFile(fs);
    return [file_log](const std::string& line) { file_log->error("{}", line); };
  };
  seams.plan = layers::BuildPlan;
  seams.verify = layers::VerifyLayer;
  seams.reads = layers::HostReads;
  seams.runner = ctx.runner;
  seams.native = ctx.native;
  seams.docker = ctx.unix_http;
  seams.make_http = ctx.make_http;
  seams.self_path = sys::SelfExecutable("/usr/local/bin/gpuprep");
  seams.fresh_verify = true;  // a library this process loaded while probing is not the one just installed

  apply::ApplyOutput out;
  out.say = [&ctx](const std::string& line) { *ctx.out << TerminalSafe(line) << "\n"; };
  if (ctx.err_is_tty && !ctx.opts.json && !ctx.opts.quiet) {
    out.progress = [&ctx](const std::string& line) {
      *ctx.err << "\rgpuprep: "
               << (line.rfind("pulling ", 0) == 0 || line.rfind("downloading ", 0) == 0 ? "" : "apt: ")
               << TerminalSafe(line) << "\033[K" << std::flush;
    };
    out.progress_end = [&ctx] { *ctx.err << "\r\033[K" << std::flush; };
  }
  return apply::RunApply(o, seams, out).exit_code;
}

}  // namespace

void RegisterApply(CLI::App* sub, Context& ctx, int& exit_code) {
  auto o = std::make_shared<apply::ApplyOptions>();
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
