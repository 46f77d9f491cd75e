// `gpuprep accept`: is this the server the offer promised? Judges measurements against the sourced
// expectation table (src/accept/, docs/accept.md): a recording (`--measurements FILE`, JSON Lines of
// docs/json.md), or, after the gate (doctor's layers; with --runtime host, the host's torch), a run of
// gpuprep's measurement program on the live host (cli/accept_measure.h). Exit 0 nothing failed, 1 a check
// failed (or, with --strict, one was skipped or had no expectation), 2 bad input.
#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <ostream>

#include "accept/catalogue_links.h"
#include "accept/gate.h"
#include "accept/judge.h"
#include "accept/offer.h"
#include "accept/record.h"
#include "accept/render.h"
#include "accept/storage.h"
#include "accept/table.h"
#include "cli/accept_measure.h"
#include "cli/accept_storage.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/size_inputs.h"
#include "cli/target.h"
#include "cli/task_doc.h"
#include "launch/validate.h"
#include "layers/check.h"
#include "manifest/loader.h"
#include "probe/host.h"
#include "sys/clock.h"
#include "sys/fs.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"
#include "watch/duration.h"

namespace gp::cli {
namespace {

struct AcceptOptions {
  bool fast = false, storage_only = false;
  std::string burn, expect, task, storage_size, runtime = "container", outlier = "10", report, measurements,
                                                save;
  std::vector<std::string> storage;
  bool strict = false;
  std::string nnodes, node_rank, master;
};

// The most nodes the check across nodes takes (the measurement program's own bound).
constexpr int kMaxAcceptNodes = 1024;

std::vector<accept::KnownBoard> KnownBoards() {
  std::vector<accept::KnownBoard> out;
  for (const auto& b : CatalogueBoards(manifest::EmbeddedCompat()))
    out.push_back({b.name, b.entries, b.pci_ids, b.memory_mib});
  return out;
}

double Outlier(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v > 0 && v < 100))
    throw FlagError("--outlier", "a percentage above 0 and below 100, not " + QuoteToken(text));
  return v;
}

// The burn's bounds: a second at least (tests), a day at most (the program's own limit).
constexpr long long kBurnMaxSeconds = 24LL * 3600;
// Without --fast and --burn, the burn runs this long.
constexpr std::chrono::seconds kDefaultBurn{600};

// --burn DURATION (default 10 minutes; none with --fast).
std::chrono::seconds BurnSeconds(const AcceptOptions& o) {
  if (o.fast) return std::chrono::seconds(0);
  if (o.burn.empty()) return kDefaultBurn;
  const auto ms = watch::ParseDuration(o.burn);
  if (!ms || *ms < 1000 || *ms > kBurnMaxSeconds * 1000 || *ms % 1000)
    throw FlagError("--burn",
                    "a whole number of seconds from 1s to 24h (10m, 1h, 90s), not " + QuoteToken(o.burn));
  return std::chrono::seconds(*ms / 1000);
}

// A whole number from `min` to `max` given to `flag`.
int WholeFlag(const char* flag, const std::string& text, int min, int max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) ||
      end != text.c_str() + text.size() || errno != 0 || v < min || v > max)
    throw FlagError(flag, "a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                              ", not " + QuoteToken(text));
  return static_cast<int>(v);
}

// The check across nodes: --nnodes, --node-rank and --master together (nullopt when none is given).
std::optional<accept::NodesRun> NodesOf(const AcceptOptions& o) {
  if (o.nnodes.empty() && o.node_rank.empty() && o.master.empty()) return std::nullopt;
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--nnodes", &o.nnodes},
                                    {"--node-rank", &o.node_rank},
                                    {"--master", &o.master}})
    if (value->empty())
      throw FlagError(flag, "the check across nodes needs --nnodes, --node-rank and --master, on every node");
  accept::NodesRun n;
  n.nnodes = WholeFlag("--nnodes", o.nnodes, 2, kMaxAcceptNodes);
  n.node_rank = WholeFlag("--node-rank", o.node_rank, 0, n.nnodes - 1);
  launch::ParseMaster(o.master);  // ADDR:PORT, or a FlagError naming --master
  n.master = o.master;
  if (!o.measurements.empty())
    throw FlagError("--nnodes", "applies when measuring; a recording (--measurements) is judged as recorded");
  const char* one_server = !o.burn.empty()      ? "--burn"
                           : !o.storage.empty() ? "--storage"
                           : o.storage_only     ? "--storage-only"
                           : !o.task.empty()    ? "--task"
                                                : nullptr;
  if (one_server)
    throw FlagError(one_server,
                    "applies to one server; the check across nodes (--nnodes) measures only the all-reduce "
                    "between them");
  return n;
}

void CheckFlags(const AcceptOptions& o) {
  if (o.runtime != "container" && o.runtime != "host")
    throw FlagError("--runtime", "container or host, not " + QuoteToken(o.runtime));
  if (o.fast && !o.burn.empty()) throw FlagError("--burn", "give --fast or --burn, not both");
  if (!o.report.empty() && !EndsWith(o.report, ".md") && !EndsWith(o.report, ".html"))
    throw FlagError("--report", "the report is FILE.md or FILE.html");
  if (!o.measurements.empty()) {
    const char* measuring_only = o.fast                    ? "--fast"
                                 : !o.save.empty()         ? "--save"
                                 : !o.burn.empty()         ? "--burn"
                                 : !o.task.empty()         ? "--task"
                                 : !o.storage.empty()      ? "--storage"
                                 : !o.storage_size.empty() ? "--storage-size"
                                 : o.storage_only          ? "--storage-only"
                                                           : nullptr;
    if (measuring_only)
      throw FlagError(measuring_only,
                      "applies when measuring; a recording (--measurements) is judged as recorded");
  }
  if (o.storage.empty()) {
    if (const char* needs_storage = !o.task.empty()           ? "--task"
                                    : !o.storage_size.empty() ? "--storage-size"
                                    : o.storage_only          ? "--storage-only"
                                                              : nullptr)
      throw FlagError(needs_storage,
                      "sizes or selects the storage measurement; give --storage PATH (the task's own checks "
                      "are not in this release)");
  }
  if (!o.task.empty() && !o.storage_size.empty())
    throw FlagError("--storage-size", "give --task (its checkpoint's size) or --storage-size, not both");
  if (o.storage_only) {
    if (const char* gpu_only = !o.burn.empty() ? "--burn" : !o.save.empty() ? "--save" : nullptr)
      throw FlagError(gpu_only, "--storage-only measures no GPU");
  }
}

// An offer document is at most this many bytes (it states six values).
constexpr size_t kMaxOfferBytes = size_t{64} * 1024;

// --expect: a kind: Offer document (a .yaml or .yml file) or a spec.
std::optional<accept::Offer> LoadOffer(Context& ctx, const std::string& expect) {
  if (expect.empty()) return std::nullopt;
  if (EndsWith(expect, ".yaml") || EndsWith(expect, ".yml"))
    return accept::ParseOfferDoc(ReadFile(ctx, expect, kMaxOfferBytes, "an offer"), expect, KnownBoards());
  return accept::ParseOfferSpec(expect, KnownBoards());
}

// An output path given by `flag`: refused up front (before anything is measured) when it cannot be written.
void CheckOutput(Context& ctx, const char* flag, const std::string& path) {
  if (sys::OutputTarget t = ctx.local_fs->OutputTargetOf(sys::AbsoluteFromCwd(path));
      t.kind == sys::OutputKind::kRefused)
    throw FlagError(flag, TerminalSafe(t.why));
}

void WriteOutputFile(Context& ctx, const char* flag, const std::string& path, const std::string& text) {
  CheckOutput(ctx, flag, path);
  auto w = ctx.local_fs->WriteOutput(sys::AbsoluteFromCwd(path), text, 0644, /*wait_for_reader=*/true);
  if (!w.ok) throw FlagError(flag, TerminalSafe(w.error));
}

void WriteReport(Context& ctx, const std::string& path, const accept::Recording& rec,
                 const accept::Result& r) {
  const std::string now = sys::NowUtc();
  WriteOutputFile(
      ctx, "--report", path,
      EndsWith(path, ".html") ? accept::RenderHtml(rec, r, now) : accept::RenderMarkdown(rec, r, now));
}

// The GPUs NVML found on a live host (each probed GPU NVML answered for).
int NvmlGpus(const probe::HostFacts& facts) {
  int n = 0;
  for (const auto& g : facts.gpus)
    if (g.nvml_status && *g.nvml_status == 0) ++n;
  return n;
}

// No recording: the gate on doctor's layers (and, with --runtime host on the live host, the host's torch),
// then the measurement: in the stack's image (--runtime container) or with this host's python3.
std::optional<Measured> GateAndMeasure(Context& ctx, const AcceptOptions& o, const MeasurePlan& plan) {
  Target t = LoadTarget(ctx, ctx.opts.manifest);
  layers::CheckInput in{t.stack, manifest::EmbeddedCompat(), t.facts, ctx.today ? ctx.today() : "",
                        t.source == StackSource::kSite ? kSiteFile : ""};
  if (auto fail = accept::CheckGate(layers::CheckAll(in), o.runtime)) {
    *ctx.err << "gpuprep: accept: the " << fail->layer << " layer fails (" << TerminalSafe(fail->detail)
             << "); nothing was measured. `gpuprep doctor` shows the fix.\n";
    return std::nullopt;
  }
  if (!t.facts.live || !ctx.runner)
    throw UsageError(
        "accept: measuring runs on the live host; a --root tree is judged from a recording "
        "(--measurements FILE)");
  if (o.runtime == "container") return MeasureInContainer(ctx, t, plan);
  if (auto fail = accept::CheckHostTorch(*ctx.runner, NvmlGpus(t.facts))) {
    *ctx.err << "gpuprep: accept: the torch gate fails (" << TerminalSafe(fail->detail)
             << "); nothing was measured. --runtime host measures with this host's python3 and its "
                "PyTorch.\n";
    return std::nullopt;
  }
  return MeasureOnHost(ctx, t, plan);
}

int RunAccept(Context& ctx, const AcceptOptions& o) {
  CheckFlags(o);
  const std::optional<accept::NodesRun> nodes = NodesOf(o);  // before anything is read or measured
  accept::Options opts;
  opts.outlier_pct = Outlier(o.outlier);
  opts.offer = LoadOffer(ctx, o.expect);
  opts.nvlink_links = accept::CatalogueNvlinkLinks(manifest::EmbeddedCompat());
  if (!o.report.empty()) CheckOutput(ctx, "--report", o.report);
  accept::Recording rec;
  std::vector<accept::Check> program_checks;
  const std::vector<accept::StorageFloor> floors =
      opts.offer ? opts.offer->storage : std::vector<accept::StorageFloor>{};
  accept::Result r;
  if (o.measurements.empty()) {
    const MeasurePlan plan{o.fast, nodes ? std::chrono::seconds(0) : BurnSeconds(o), nodes};
    if (!o.save.empty()) CheckOutput(ctx, "--save", o.save);
    const uint64_t storage_bytes = o.storage.empty() ? 0 : StorageBytes(ctx, o.task, o.storage_size);
    CheckStorageDirs(o.storage, storage_bytes);
    if (o.storage_only) {
      rec.run.host = "this host";
      rec.run.started_at = sys::NowUtc();
    } else {
      std::optional<Measured> m = GateAndMeasure(ctx, o, plan);
      if (!m) return kExitFailed;
      if (!o.save.empty()) WriteOutputFile(ctx, "--save", o.save, m->text);
      rec = std::move(m->recording);
      program_checks = std::move(m->program_checks);
      r = accept::Judge(rec, accept::EmbeddedTable(), opts);
    }
    // Storage after the GPUs, so that neither disturbs the other's figures.
    for (auto& c : MeasureStorageDirs(ctx, o.storage, storage_bytes, floors))
      program_checks.push_back(std::move(c));
    if (o.storage_only) rec.run.finished_at = sys::NowUtc();
  } else {
    const std::string text = ReadFile(ctx, o.measurements, accept::kMaxTotal, "a recording");
    rec = accept::ParseRecording(text, o.measurements);
    r = accept::Judge(rec, accept::EmbeddedTable(), opts);
    for (const auto& f : floors) program_checks.push_back(accept::UnmeasuredFloor(f));
  }
  r.checks.insert(r.checks.end(), program_checks.begin(), program_checks.end());
  accept::Tally(r);
  if (ctx.opts.json) {
    PrintJson(ctx, accept::ReportJson(rec, r));
  } else {
    *ctx.out << accept::RenderTable(rec, r, ctx.use_color());
  }
  if (!o.report.empty()) WriteReport(ctx, o.report, rec, r);
  return accept::ExitCodeFor(r, o.strict);
}

}  // namespace

void ValidateOfferDocument(const std::string& text, const std::string& path) {
  (void)accept::ParseOfferDoc(text, path, KnownBoards());
}

void RegisterAccept(CLI::App* sub, Context& ctx, int& exit_code) {
  auto o = std::make_shared<AcceptOptions>();
  sub->add_flag("--fast", o->fast, "A short measurement (about 5 minutes at most)");
  sub->add_option("--burn", o->burn,
                  "Burn for DURATION: seeded products on every GPU, compared bit for bit (default 10m; none "
                  "with --fast)");
  sub->add_option(
      "--expect", o->expect,
      "The offer: 8x\"H100 SXM5 80GB\",cpus=192,ram=2TB,nvme=8x3.84TB (a board name or a PCI id), or a "
      "kind: Offer YAML file");
  sub->add_option("--task", o->task, "A kind: Task document: --storage writes one checkpoint of its size");
  sub->add_option("--storage", o->storage,
                  "A directory to measure: one checkpoint-sized file written and read back (repeatable)");
  sub->add_option("--storage-size", o->storage_size, "Bytes to write per --storage directory (default 16GB)");
  sub->add_flag("--storage-only", o->storage_only,
                "Measure only the --storage directories: no gate, no GPU measurement");
  sub->add_option("--runtime", o->runtime, "container (default) or host: where the measurements run");
  sub->add_option("--outlier", o->outlier,
                  "A GPU this many percent below its peers' median fails (default 10)");
  sub->add_flag("--strict", o->strict, "Exit 1 when a check was skipped or had no expectation");
  sub->add_option("--report", o->report, "Also write the report to FILE.md or FILE.html");
  sub->add_option("--measurements", o->measurements, "Judge this recording (JSON Lines, docs/json.md)");
  sub->add_option("--save", o->save,
                  "Also write what was measured as a recording to FILE (--measurements reads it)");
  sub->add_option("--nnodes", o->nnodes,
                  "The check across nodes: how many nodes (run accept on each, with the same --master)");
  sub->add_option("--node-rank", o->node_rank, "The check across nodes: this node's rank, 0 to --nnodes - 1");
  sub->add_option("--master", o->master, "The check across nodes: ADDR:PORT of node 0, where the nodes meet");
  sub->callback([&ctx, &exit_code, o] { exit_code = RunAccept(ctx, *o); });
}

}  // namespace gp::cli
