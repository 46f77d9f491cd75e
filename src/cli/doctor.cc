// `gpuprep doctor`: probe the host (or the --root tree), check every layer against the stack, print a
// table or PRODUCT.md's JSON. Read-only. Exit 0 when no layer failed, 1 when one did, 2 on a bad manifest.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/target.h"
#include "doctor/report.h"
#include "layers/check.h"
#include "manifest/loader.h"

namespace gp::cli {

void RegisterDoctor(CLI::App& app, Context& ctx, int& exit_code) {
  CLI::App* sub = app.add_subcommand("doctor", "Check every layer of this host against a stack (read-only)");
  sub->callback([&ctx, &exit_code] {
    Target t = LoadTarget(ctx, ctx.opts.manifest);
    layers::CheckInput in{t.stack, manifest::EmbeddedCompat(), t.facts, ctx.today ? ctx.today() : ""};
    std::vector<layers::LayerReport> reports = layers::CheckAll(in);
    if (ctx.opts.json) {
      *ctx.out << doctor::ReportJson(t.stack.name, t.facts, reports).dump(2) << "\n";
    } else {
      *ctx.out << doctor::RenderTable(t.stack, t.facts, reports, {ctx.use_color(), ctx.opts.verbose});
    }
    exit_code = doctor::ExitCodeFor(reports);
  });
}

}  // namespace gp::cli
