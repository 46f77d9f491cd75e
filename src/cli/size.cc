// `gpuprep size [--task FILE] [--model NAME | --config FILE | --params N] [task flags...]` (docs/cli.md,
// docs/size.md): the GPU memory a training task needs per GPU, term by term; the servers that fit it, the
// host around them and what they cost; whether real hosts fit it. Reads only the files named (a Task
// document, a config.json, a price list, doctor snapshots) and, with --check-host, probes this host (or
// --root) read-only; exit 0 with an answer, 1 when a judged host does not fit, 2 for bad input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/size_inputs.h"
#include "cli/target.h"
#include "cli/task_doc.h"
#include "layers/host_spec.h"
#include "layers/task.h"
#include "manifest/loader.h"
#include "manifest/tree.h"
#include "prices/prices.h"
#include "probe/host_json.h"
#include "size/estimate.h"
#include "size/hf_config.h"
#include "size/recommend.h"
#include "size/render.h"
#include "size/render_servers.h"
#include "size/settings.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "util/error.h"

namespace gp::cli {
namespace {

struct SizeOptions {
  std::map<std::string, std::string> values;  // setting key -> flag value
  std::map<std::string, CLI::Option*> options;
  std::string task_file;
  bool list_models = false;
  std::string prices_file, flat_price, boards;
  std::vector<std::string> hosts;
  bool check_host = false;
  int max_servers = 64;
};

// Every host the options name: snapshots, then this host or the --root tree.
std::vector<size::HostVerdict> JudgeHosts(Context& ctx, const SizeOptions& o, const size::Task& t) {
  const manifest::Compat& compat = manifest::EmbeddedCompat();
  std::vector<size::HostVerdict> out;
  for (const std::string& f : o.hosts) {
    const std::string text = ReadFile(ctx, f, probe::kMaxSnapshotBytes, "a doctor snapshot");
    const probe::HostFacts h = probe::HostFromSnapshotText(text, f);
    out.push_back(size::JudgeHost(
        t, layers::HostSpecOf(h, compat, h.hostname.empty() ? f : h.hostname + " (" + f + ")")));
  }
  if (o.check_host || !ctx.opts.root.empty()) {
    const ProbedHost p = ProbeTarget(ctx);
    std::string label = ctx.opts.root.empty() ? "this host" : ctx.opts.root;
    if (!p.facts.hostname.empty()) label = p.facts.hostname + " (" + label + ")";
    out.push_back(size::JudgeHost(t, layers::HostSpecOf(p.facts, compat, label)));
  }
  return out;
}

int RunSize(Context& ctx, const SizeOptions& o) {
  if (o.list_models) {
    if (ctx.opts.json)
      PrintJson(ctx, size::ModelTableJson());
    else
      *ctx.out << size::RenderModelTable();
    return kExitOk;
  }
  size::Task t;
  if (!o.task_file.empty())
    layers::ApplyTaskDocument(t, ReadFile(ctx, o.task_file, manifest::kMaxManifestBytes, "a task"),
                              o.task_file);
  for (const auto& k : size::SettingKeys()) {
    auto it = o.options.find(k.key);
    if (it == o.options.end() || it->second->count() == 0) continue;
    const std::string& v = o.values.at(k.key);
    size::Apply(t, size::Setting{k.key, k.boolean && v.empty() ? "true" : v, size::Origin{"", 0, 0, k.flag}});
  }
  LoadTaskConfig(t, ctx);
  size::Finish(t);
  const size::Estimate e = size::EstimateTask(t);
  size::FitAnswer fit;
  if (t.gpu_memory > 0) {
    fit.gpu_memory = t.gpu_memory;
    fit.fit = size::SmallestFit(t, t.gpu_memory);
  }
  if (o.max_servers < 1 || o.max_servers > 4096)
    throw FlagError("--max-servers", "must be between 1 and 4096");
  const std::optional<prices::Table> price_table = LoadPrices(ctx, o.prices_file, o.flat_price);
  std::vector<size::Board> boards = CatalogueBoards(manifest::EmbeddedCompat());
  if (!o.boards.empty()) boards = FilterBoards(boards, o.boards);
  size::SearchLimits limits;
  limits.max_servers = o.max_servers;
  const size::Recommendation rec = size::Recommend(t, boards, limits);
  const size::Costs costs = price_table ? CostsOf(rec, *price_table) : size::Costs{};
  const std::vector<size::HostVerdict> verdicts = JudgeHosts(ctx, o, t);
  const bool judged = !verdicts.empty();
  const bool all_fit =
      std::all_of(verdicts.begin(), verdicts.end(), [](const size::HostVerdict& v) { return v.fits; });
  if (ctx.opts.json) {
    nlohmann::ordered_json j = size::RenderJson(t, e, fit);
    j["servers"] = size::ServersJson(t, rec, costs);
    j["hosts"] = judged ? size::VerdictsJson(verdicts) : nlohmann::ordered_json(nullptr);
    PrintJson(ctx, j);
  } else {
    *ctx.out << size::RenderText(t, e, fit, ctx.opts.verbose, ctx.use_color());
    if (judged) {
      *ctx.out << "\n" << size::RenderVerdictsText(verdicts);
    } else {
      *ctx.out << "\n" << size::RenderServersText(rec, costs, ctx.opts.verbose);
      const std::string host = size::RenderHostNeedText(t, rec, ctx.opts.verbose);
      if (!host.empty()) *ctx.out << "\n" << host;
    }
  }
  return judged && !all_fit ? kExitFailed : kExitOk;
}

}  // namespace

void LoadTaskConfig(size::Task& t, Context& ctx) {
  if (t.config_path.empty()) return;
  const std::string text = ReadFile(ctx, t.config_path, size::kMaxConfigBytes, "a config.json");
  t.arch = size::ParseHfConfig(text, t.config_path);
  t.model_source = "config " + t.config_path;
}

void ValidateTaskDocument(const std::string& text, const std::string& path, Context& ctx) {
  size::Task t;
  layers::ApplyTaskDocument(t, text, path);
  LoadTaskConfig(t, ctx);
  size::Finish(t);
  size::EstimateTask(t);
}

void RegisterSize(CLI::App* sub, Context& ctx, int& exit_code) {
  auto o = std::make_shared<SizeOptions>();
  sub->add_option("--task", o->task_file, "A kind: Task YAML document; flags override its values");
  sub->add_flag("--list-models", o->list_models, "The shipped model table and its sources");
  sub->add_option("--boards", o->boards, "Only these boards (comma-separated names or PCI ids)");
  sub->add_option("--max-servers", o->max_servers, "Search multi-server configurations up to N servers (64)");
  sub->add_option("--prices", o->prices_file, "A kind: Prices document: price per GPU-hour per GPU model");
  sub->add_option("--price-per-gpu-hour", o->flat_price, "One price per GPU-hour for every board");
  sub->add_option("--host", o->hosts, "Judge a host from its doctor --json snapshot (repeatable: a fleet)");
  sub->add_flag("--check-host", o->check_host, "Judge this host (or the --root tree) against the task");
  for (const auto& k : size::SettingKeys()) {
    std::string& value = o->values[k.key];
    CLI::Option* opt = sub->add_option(k.flag, value, k.help)->group("Task");
    if (k.boolean) opt->expected(0, 1)->type_name("[true|false]");  // alone: true
    o->options[k.key] = opt;
  }
  sub->callback([&ctx, &exit_code, o] { exit_code = RunSize(ctx, *o); });
}

}  // namespace gp::cli
