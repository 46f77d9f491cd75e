// `gpuprep plan [--format text|sh|json] [--only L] [--skip L]`: the steps `apply` would run on this host
// (or a --root tree), computed exactly as apply computes them. Changes nothing.
#include "layers/plan.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "host/files.h"
#include "layers/table.h"
#include "manifest/digest.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "sys/host_info.h"
#include "util/error.h"

namespace gp::cli {
namespace {

// What the script needs to call gpuprep again as this plan was made: the same stack (how to load it again,
// pinned by its documents' sha256), tree and flags.
plan::ShOptions ShOptionsFor(const Context& ctx, const Target& t, const plan::PlanInput& in,
                             bool restart_docker, bool one_shot) {
  plan::ShOptions o;
  o.manifest = t.spec.empty() ? t.manifest : t.spec;
  if (!o.manifest.empty()) o.manifest_sha256 = manifest::DocumentsSha256(t.stack);
  // Absolute: the second plan may be made from another working directory.
  if (!ctx.opts.root.empty()) o.root = sys::AbsoluteFromCwd(ctx.opts.root);
  o.only = in.only;
  o.skip = in.skip;
  o.restart_docker = restart_docker;
  o.one_shot = one_shot;
  return o;
}

}  // namespace

void RegisterPlan(CLI::App* sub, Context& ctx, int& exit_code) {
  struct Options {
    std::string format = "text";
    std::vector<std::string> only, skip;
    bool restart_docker = false;
    bool one_shot = false;
  };
  auto opts = std::make_shared<Options>();
  sub->add_option("--format", opts->format, "text | sh | json");
  sub->add_option("--only", opts->only, "Plan only these layers (repeatable, or comma-separated)");
  sub->add_option("--skip", opts->skip, "Leave these layers out (repeatable, or comma-separated)");
  sub->add_flag("--restart-docker", opts->restart_docker, "Plan as apply --restart-docker would run");
  sub->add_flag(
      "--one-shot", opts->one_shot,
      "With --format sh: one script that makes and runs the rest of the plan itself, unreviewed "
      "(default: it stops after the repository setup and prints the command for the second script)");
  sub->callback([&ctx, &exit_code, opts] {
    if (opts->format != "text" && opts->format != "sh" && opts->format != "json")
      throw FlagError("--format", "must be text, sh or json, not \"" + opts->format + "\"");
    if (opts->one_shot && opts->format != "sh") throw FlagError("--one-shot", "only with --format sh");
    plan::PlanInput in;
    in.only = layers::ParseLayerList("--only", opts->only);
    in.skip = layers::ParseLayerList("--skip", opts->skip);
    Target t = LoadTarget(ctx, ctx.opts.manifest);
    in.stack = &t.stack;
    in.facts = &t.facts;
    const plan::HostState host =
        host::ReadFiles(*t.fs, t.stack, t.facts, layers::HostReads(t.stack, t.facts));
    in.host = &host;
    in.manifest = t.manifest;
    in.from = t.host_stack_loaded ? &*t.host_stack_loaded : nullptr;  // a move: what it changes
    in.restart_docker = opts->restart_docker;
    plan::Plan p = layers::BuildPlan(in);
    if (opts->format == "json" || ctx.opts.json)
      PrintJson(ctx, plan::RenderJson(p));
    else if (opts->format == "sh")
      *ctx.out << plan::RenderSh(p, ShOptionsFor(ctx, t, in, opts->restart_docker, opts->one_shot));
    else
      *ctx.out << plan::RenderText(p);
    exit_code = kExitOk;
  });
}

}  // namespace gp::cli
