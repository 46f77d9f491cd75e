// `gpuprep doctor`: probe the host (or the --root tree), check every layer against the stack, print a
// table or the JSON of docs/json.md. Read-only. Exit 0 when no layer failed, 1 when one did, 2 on a bad
// manifest. Offline unless --registry: then the stack's image, when the engine does not have it, is read from
// its registry.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "cli/doctor_health.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "doctor/report.h"
#include "layers/check.h"
#include "manifest/loader.h"
#include "probe/xid.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {
constexpr int kMaxNodes = 100000;  // far above any cluster a doctor run speaks for; bounds the text

struct DoctorFlags {
  bool registry = false;
  bool health = false;
  HealthOptions ho;
  std::string since;
  int nodes = 0;
  CLI::Option* nodes_opt = nullptr;
  bool nodes_given() const { return nodes_opt && nodes_opt->count() > 0; }
};

// --nodes and --since checked where they enter, before anything is read.
void CheckDoctorFlags(const Context& ctx, const DoctorFlags& f) {
  if (f.nodes_given() && (f.nodes < 1 || f.nodes > kMaxNodes))
    throw FlagError("--nodes", "must be a whole number from 1 to " + std::to_string(kMaxNodes) + ", got " +
                                   std::to_string(f.nodes));
  if (f.nodes_given() && f.health)
    throw FlagError("--nodes", "the health checks judge no network; drop --nodes or --health");
  if (!f.since.empty() && !probe::ValidJournalSince(f.since))
    throw FlagError("--since",
                    QuoteToken(f.since) +
                        " is not a time doctor passes to journalctl: a date (2024-12-02), a date and "
                        "time (\"2024-12-02 11:00[:00]\"), today, yesterday, or -N with s, min, h, d or w");
  if (!f.since.empty() && !ctx.opts.root.empty())
    throw FlagError("--since", "the journal is read on the live host only, not with --root");
}

// Whether any health option was given (they need --health, which takes no --registry).
bool HealthAsked(const DoctorFlags& f) {
  const HealthOptions& ho = f.ho;
  if (!(f.health || ho.npd || ho.slurm || !ho.node.empty() || !ho.classes.empty() || !ho.prometheus.empty()))
    return false;
  if (!f.health)
    throw FlagError(ho.npd                   ? "--npd"
                    : ho.slurm               ? "--slurm"
                    : !ho.node.empty()       ? "--node"
                    : !ho.prometheus.empty() ? "--prometheus"
                                             : "--class",
                    "is one of doctor --health's options: add --health");
  if (f.registry)
    throw FlagError("--registry", "the health checks read no image; drop --registry or --health");
  return true;
}

int RunDoctor(Context& ctx, const DoctorFlags& f) {
  CheckDoctorFlags(ctx, f);
  if (HealthAsked(f)) {
    HealthOptions ho = f.ho;
    ho.since = f.since;
    return RunHealth(ctx, ho);
  }
  Target t = LoadTarget(ctx, ctx.opts.manifest);
  if (!f.since.empty()) ReadXidJournal(ctx, *t.fs, f.since, t.facts);
  if (f.registry) ReadStackImageFromRegistry(ctx, t.stack, t.facts);
  // --nodes, else the stack's workload.nodes: a stack for jobs on several nodes judges the network so.
  layers::CheckInput in{t.stack,
                        manifest::EmbeddedHostCompat(),
                        t.facts,
                        ctx.today ? ctx.today() : "",
                        t.source == StackSource::kSite ? kSiteFile : "",
                        f.nodes_given() ? f.nodes : t.stack.workload.nodes};
  std::vector<verdict::LayerReport> reports = layers::CheckAll(in);
  if (ctx.opts.json) {
    PrintJson(ctx, doctor::ReportJson(t.stack.name, t.facts, reports));
  } else {
    *ctx.out << doctor::RenderTable(t.stack, t.facts, reports, {ctx.use_color(), ctx.opts.verbose});
  }
  return doctor::ExitCodeFor(reports);
}
}  // namespace

void RegisterDoctor(CLI::App* sub, Context& ctx, int& exit_code) {
  auto f = std::make_shared<DoctorFlags>();
  HealthOptions* ho = &f->ho;
  sub->add_flag(
      "--registry", f->registry,
      "Read the stack's image's CUDA from its registry when the local engine does not have it (network)");
  sub->add_flag("--health", f->health, "Only the GPU health checks (no stack; fast)");
  sub->add_flag(
      "--npd", ho->npd,
      "With --health: node-problem-detector's protocol (exit 0 ok, 1 problem, 2 unknown; one line)");
  sub->add_flag("--slurm", ho->slurm,
                "With --health: Slurm's HealthCheckProgram (drain this node through scontrol on a failure)");
  sub->add_option("--prometheus", ho->prometheus,
                  "With --health: write the health verdict as a node_exporter textfile (*.prom)");
  sub->add_option("--node", ho->node, "With --slurm: this node's Slurm name (default: slurmd -C's NodeName)");
  sub->add_option("--class", ho->classes,
                  "With --health: only these health classes (bus, memory, clocks, "
                  "nvlink, xid, recovery; comma-separated)")
      ->delimiter(',');
  sub->add_option(
      "--since", f->since,
      "Read the Xid history from the journal since TIME (2024-12-02, \"2024-12-02 11:00\", today, "
      "yesterday, -6h), earlier boots included (live host only)");
  f->nodes_opt = sub->add_option(
      "--nodes", f->nodes,
      "How many nodes this host's jobs span; above 1 the network layer is shown and its faults fail");
  sub->callback([&ctx, &exit_code, f] { exit_code = RunDoctor(ctx, *f); });
}

}  // namespace gp::cli
