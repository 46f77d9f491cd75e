// `gpuprep plan [--format text|sh|json] [--only L] [--skip L]`: the steps `apply` would run on this host
// (or a --root tree), computed exactly as apply computes them. Changes nothing.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "util/error.h"

namespace gp::cli {

void RegisterPlan(CLI::App& app, Context& ctx, int& exit_code) {
  struct Options {
    std::string format = "text";
    std::vector<std::string> only, skip;
    bool restart_docker = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("plan", "Print the steps apply would run (text, a shell script, or JSON)");
  sub->add_option("--format", opts->format, "text | sh | json");
  sub->add_option("--only", opts->only, "Plan only these layers (repeatable, or comma-separated)");
  sub->add_option("--skip", opts->skip, "Leave these layers out (repeatable, or comma-separated)");
  sub->add_flag("--restart-docker", opts->restart_docker, "Plan as apply --restart-docker would run");
  sub->callback([&ctx, &exit_code, opts] {
    if (opts->format != "text" && opts->format != "sh" && opts->format != "json")
      throw FlagError("--format", "must be text, sh or json, not \"" + opts->format + "\"");
    plan::PlanInput in;
    in.only = plan::ParseLayerList("--only", opts->only);
    in.skip = plan::ParseLayerList("--skip", opts->skip);
    Target t = LoadTarget(ctx, ctx.opts.manifest);
    in.stack = &t.stack;
    in.facts = &t.facts;
    in.fs = t.fs.get();
    in.manifest = t.manifest;
    in.from = t.host_stack_loaded ? &*t.host_stack_loaded : nullptr;  // a move: what it changes
    in.restart_docker = opts->restart_docker;
    plan::Plan p = plan::BuildPlan(in);
    if (opts->format == "json" || ctx.opts.json)
      PrintJson(ctx, plan::RenderJson(p));
    else if (opts->format == "sh")
      *ctx.out << plan::RenderSh(p);
    else
      *ctx.out << plan::RenderText(p);
    exit_code = kExitOk;
  });
}

}  // namespace gp::cli
