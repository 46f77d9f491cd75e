// `gpuprep doctor`: probe the host (or the --root tree), check every layer against the stack, print a
// table or the JSON of docs/json.md. Read-only. Exit 0 when no layer failed, 1 when one did, 2 on a bad
// manifest. Offline unless --registry: then the stack's image, when the engine does not have it, is read from
// its registry.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "doctor/report.h"
#include "layers/check.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "probe/xid.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {

void RegisterDoctor(CLI::App& app, Context& ctx, int& exit_code) {
  CLI::App* sub = app.add_subcommand("doctor", "Check every layer of this host against a stack (read-only)");
  auto registry = std::make_shared<bool>(false);
  sub->add_flag(
      "--registry", *registry,
      "Read the stack's image's CUDA from its registry when the local engine does not have it (network)");
  auto since = std::make_shared<std::string>();
  sub->add_option(
      "--since", *since,
      "Read the Xid history from the journal since TIME (2024-12-02, \"2024-12-02 11:00\", today, "
      "yesterday, -6h), earlier boots included (live host only)");
  sub->callback([&ctx, &exit_code, registry, since] {
    if (!since->empty() && !probe::ValidJournalSince(*since))
      throw FlagError("--since",
                      QuoteToken(*since) +
                          " is not a time doctor passes to journalctl: a date (2024-12-02), a date and "
                          "time (\"2024-12-02 11:00[:00]\"), today, yesterday, or -N with s, min, h, d or w");
    if (!since->empty() && !ctx.opts.root.empty())
      throw FlagError("--since", "the journal is read on the live host only, not with --root");
    Target t = LoadTarget(ctx, ctx.opts.manifest);
    if (!since->empty() && !t.facts.gpus.empty()) {
      probe::ProbeEnv env;
      env.runner = ctx.runner;
      env.fs = t.fs.get();
      probe::ProbeXidJournal(env, *since, t.facts);
    }
    if (*registry) ReadStackImageFromRegistry(ctx, t.stack, t.facts);
    layers::CheckInput in{t.stack, manifest::EmbeddedCompat(), t.facts, ctx.today ? ctx.today() : "",
                          t.source == StackSource::kSite ? kSiteFile : ""};
    std::vector<verdict::LayerReport> reports = layers::CheckAll(in);
    if (ctx.opts.json) {
      PrintJson(ctx, doctor::ReportJson(t.stack.name, t.facts, reports));
    } else {
      *ctx.out << doctor::RenderTable(t.stack, t.facts, reports, {ctx.use_color(), ctx.opts.verbose});
    }
    exit_code = doctor::ExitCodeFor(reports);
  });
}

}  // namespace gp::cli
