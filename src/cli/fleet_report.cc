// `gpuprep fleet-report [--format text|markdown|json|html] [-o FILE] SNAPSHOT...`: many hosts'
// `gpuprep doctor --json` outputs as one table grouped by finding (src/fleet/). Reads only the files named;
// exit 0 when no host fails, 1 when one does, 2 for a file that is not a doctor snapshot.
#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/commands.h"
#include "fleet/model.h"
#include "fleet/render.h"
#include "probe/host_json.h"
#include "sys/fs.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {

struct FleetOptions {
  std::string format = "text";
  std::string output;
  std::vector<std::string> files;
};

int RunFleetReport(Context& ctx, const FleetOptions& o) {
  const std::string format = ctx.opts.json ? "json" : o.format;
  if (format != "text" && format != "markdown" && format != "md" && format != "json" && format != "html")
    throw FlagError("--format", "must be text, markdown, json or html, not \"" + o.format + "\"");
  if (o.files.empty()) throw UsageError("fleet-report: name at least one doctor --json snapshot");
  if (o.files.size() > 100000) throw UsageError("fleet-report: more than 100000 snapshots");
  const bool to_stdout = o.output.empty() || o.output == "-";
  const std::string output = to_stdout ? "" : sys::AbsoluteFromCwd(o.output);
  // A directory, a socket or a block device is refused before any snapshot is read.
  if (!to_stdout)
    if (sys::OutputTarget t = ctx.local_fs->OutputTargetOf(output); t.kind == sys::OutputKind::kRefused)
      throw FlagError("--output", TerminalSafe(t.why));
  // One snapshot at a time: read, parsed into its Host (what the report keeps of it), its text dropped.
  std::vector<fleet::Host> hosts;
  hosts.reserve(o.files.size());
  for (const auto& f : o.files) {
    std::string why;
    auto text = sys::ReadWithin(*ctx.local_fs, sys::AbsoluteFromCwd(f), f, probe::kMaxSnapshotBytes, why);
    if (!text) throw UsageError(why);
    hosts.push_back(fleet::ParseSnapshot(*text, f));
  }
  fleet::Report r = fleet::BuildReport(std::move(hosts));
  if (to_stdout && (format == "json" || format == "html")) {  // the large ones, written as they are made
    if (format == "json")
      fleet::RenderJson(r, *ctx.out);
    else
      fleet::RenderHtml(r, *ctx.out);
    return fleet::ExitCodeFor(r);
  }
  std::string out = format == "json"   ? fleet::RenderJson(r)
                    : format == "html" ? fleet::RenderHtml(r)
                    : format == "text" ? fleet::RenderText(r)
                                       : fleet::RenderMarkdown(r);
  if (to_stdout) {
    *ctx.out << out;
  } else {
    auto w = ctx.local_fs->WriteOutput(output, out, 0644, /*wait_for_reader=*/true);
    if (!w.ok) throw FlagError("--output", TerminalSafe(w.error));
  }
  return fleet::ExitCodeFor(r);
}

}  // namespace

void RegisterFleetReport(CLI::App* sub, Context& ctx, int& exit_code) {
  auto o = std::make_shared<FleetOptions>();
  sub->add_option("--format", o->format, "text | markdown | json | html (a self-contained, filterable page)");
  sub->add_option(
      "-o,--output", o->output,
      "Write the report to FILE instead of stdout (a FIFO or a device is written, never replaced)");
  sub->add_option("snapshots", o->files, "doctor --json files, one per host")->required();
  sub->callback([&ctx, &exit_code, o] { exit_code = RunFleetReport(ctx, *o); });
}

}  // namespace gp::cli
