// doctor --health (cli/doctor_health.h): the health probe (probe::ProbeHealth), the health findings
// (layers::CheckHealthOnly), printed as doctor prints them or in a cluster's protocol.
#include "cli/doctor_health.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <ostream>

#include "cli/json_out.h"
#include "cli/prom_path.h"
#include "cli/target.h"
#include "doctor/health.h"
#include "doctor/health_prom.h"
#include "doctor/report.h"
#include "layers/check.h"
#include "manifest/loader.h"
#include "sys/clock.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

void CheckFlags(const Context& ctx, const HealthOptions& o) {
  if (o.npd && o.slurm) throw FlagError("--npd", "--npd and --slurm speak to different callers; choose one");
  if (!o.prometheus.empty() && (o.npd || o.slurm))
    throw FlagError("--prometheus", std::string("writes node_exporter's textfile, not ") +
                                        (o.npd ? "--npd's" : "--slurm's") + " protocol; choose one");
  if ((o.npd || o.slurm || !o.prometheus.empty()) && ctx.opts.json)
    throw FlagError("--json", "--npd, --slurm and --prometheus speak their own protocol, not JSON");
  if (!o.node.empty() && !o.slurm)
    throw FlagError("--node", "names the Slurm node to drain: use it with --slurm");
  if (!o.node.empty() && !doctor::ValidSlurmNodeName(o.node))
    throw FlagError("--node",
                    QuoteToken(o.node) +
                        " is not a node name (a letter or digit, then letters, digits, '.', '_', '-'; "
                        "at most 64)");
  if (o.slurm && !ctx.opts.root.empty())
    throw FlagError("--slurm", "drains this node, so it judges this host only, not a --root tree");
  for (const auto& c : o.classes) {
    const auto& all = doctor::HealthClasses();
    if (std::find(all.begin(), all.end(), c) == all.end())
      throw FlagError("--class", QuoteToken(c) + " is not a health class (" + Join(all, ", ") + ")");
  }
}

// This node's Slurm name: --node, else the NodeName `slurmd -C` prints. Empty (and said on stderr) when
// neither gives a valid one.
std::string SlurmNode(Context& ctx, const HealthOptions& o) {
  if (!o.node.empty()) return o.node;
  sys::Command cmd;
  cmd.argv = {"slurmd", "-C"};
  cmd.timeout = std::chrono::milliseconds(5000);
  cmd.max_output = size_t{64} * 1024;
  const sys::CommandResult r = ctx.runner->Run(cmd);
  std::optional<std::string> name = r.ok() ? doctor::SlurmdNodeName(r.out) : std::nullopt;
  if (!name || !doctor::ValidSlurmNodeName(*name)) {
    *ctx.err << "gpuprep: error: this node's Slurm name is unknown: `slurmd -C` "
             << (r.not_found ? "was not found"
                 : !r.ok()   ? "failed"
                 : name      ? "printed an invalid NodeName " + QuoteToken(*name)
                             : "printed no NodeName")
             << "; pass --node NAME\n";
    return "";
  }
  return *name;
}

// Drains the node when the verdict is not ok. 0 when healthy or drained, 1 when the drain failed.
int Slurm(Context& ctx, const HealthOptions& o, const doctor::HealthVerdict& v) {
  if (!ctx.runner) throw Error(kExitFailed, "--slurm: no command runner to reach slurmd and scontrol");
  const std::string node = SlurmNode(ctx, o);
  if (node.empty()) return kExitFailed;
  std::optional<std::vector<std::string>> argv = doctor::SlurmDrainArgv(v, node);
  if (!argv) {
    *ctx.out << node << ": " << doctor::NpdLine(v, 200) << "\n";
    return kExitOk;
  }
  sys::Command cmd;
  cmd.argv = *argv;
  cmd.timeout = std::chrono::milliseconds(10000);
  const sys::CommandResult r = ctx.runner->Run(cmd);
  if (!r.ok()) {
    *ctx.err << "gpuprep: error: " << sys::ShellJoin(cmd.argv) << " failed"
             << (r.not_found   ? " (scontrol not found)"
                 : r.timed_out ? " (timed out)"
                               : "")
             << ": " << TerminalSafe(Trim(r.err)) << "\n";
    return kExitFailed;
  }
  *ctx.out << "drained " << node << ": " << argv->back().substr(7) << "\n";
  return kExitOk;
}

// Writes the textfile (atomically for a regular file: beside it, then renamed) and prints the verdict's one
// line. 0 when no chosen class failed, 1 when one did or the file could not be written.
int Prometheus(Context& ctx, const std::string& path, const doctor::HealthVerdict& v,
               const probe::HostFacts& facts, const std::vector<std::string>& classes,
               doctor::HealthRunTimes times) {
  const std::string text = doctor::HealthProm(v, facts, classes, times);
  const sys::WriteResult w = ctx.local_fs->WriteOutput(path, text, 0644, /*wait_for_reader=*/false);
  if (!w.ok)
    throw Error(kExitFailed,
                "--prometheus: cannot write " + TerminalSafe(path) + ": " + TerminalSafe(w.error));
  *ctx.out << doctor::NpdLine(v, 200) << "\n";
  return v.kind == doctor::HealthVerdict::Kind::kProblem ? kExitFailed : kExitOk;
}

}  // namespace

int RunHealth(Context& ctx, const HealthOptions& o) {
  CheckFlags(ctx, o);
  const std::string prom_path = PromPath(ctx, o.prometheus);
  const std::function<long long()> wall = ctx.wall_ms ? ctx.wall_ms : [] { return sys::UnixMillis(); };
  const long long start_ms = wall();
  ProbedHost host = ProbeHealthTarget(ctx);
  ReadXidJournal(ctx, *host.fs, o.since, host.facts);
  const probe::HostFacts& facts = host.facts;
  static const manifest::Stack kNoStack;
  const layers::CheckInput in{kNoStack, manifest::EmbeddedHostCompat(), facts, "", ""};
  const std::vector<verdict::LayerReport> reports = layers::CheckHealthOnly(in);
  const doctor::HealthVerdict v = doctor::JudgeHealth(reports, facts, o.classes);
  if (o.npd) {
    *ctx.out << doctor::NpdLine(v) << "\n";
    return doctor::NpdExitCode(v);
  }
  if (o.slurm) return Slurm(ctx, o, v);
  if (!prom_path.empty()) {
    const long long end_ms = wall();
    return Prometheus(ctx, prom_path, v, facts, o.classes, {end_ms, std::max(0LL, end_ms - start_ms)});
  }
  if (ctx.opts.json) {
    PrintJson(ctx, doctor::ReportJson("", facts, reports));
  } else {
    doctor::TableOptions t{ctx.use_color(), ctx.opts.verbose};
    const std::string os = facts.os.pretty_name.empty() ? facts.os.id : facts.os.pretty_name;
    t.title = "gpuprep doctor --health: GPU health on " + (os.empty() ? std::string("?") : os) + " (" +
              facts.kernel + "), no stack";
    *ctx.out << doctor::RenderTable(kNoStack, facts, reports, t);
  }
  return doctor::ExitCodeFor(reports);
}

}  // namespace gp::cli
