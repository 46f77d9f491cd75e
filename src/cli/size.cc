// `gpuprep size [--task FILE] [--model NAME | --config FILE | --params N] [task flags...]` (docs/cli.md,
// docs/size.md): the GPU memory a training task needs per GPU, term by term. Reads only the files named
// (a Task document, a config.json); exit 0 with an answer, 2 for bad input.
#include <CLI/CLI.hpp>
#include <map>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/task_doc.h"
#include "manifest/settings_doc.h"
#include "manifest/tree.h"
#include "size/estimate.h"
#include "size/hf_config.h"
#include "size/render.h"
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
};

std::string ReadFile(Context& ctx, const std::string& path, size_t limit, const std::string& what) {
  if (!ctx.local_fs) throw UsageError("cannot read " + path + ": no filesystem here");
  const std::string abs = sys::AbsoluteFromCwd(path);
  auto text = ctx.local_fs->Read(abs);
  if (!text) throw UsageError(sys::WhyUnreadable(*ctx.local_fs, abs, path));
  if (text->size() > limit)
    throw FileError(path, 1, 1, "larger than the " + std::to_string(limit >> 20) + " MiB limit for " + what);
  return std::move(*text);
}

std::vector<std::string> Leaves() {
  std::vector<std::string> keys;
  for (const auto& k : size::SettingKeys()) keys.emplace_back(k.key);
  return keys;
}

// Applies a Task document's settings; a relative `config:` is taken relative to the document.
void ApplyDocument(size::Task& t, const std::string& text, const std::string& path) {
  const manifest::SettingsDoc doc = manifest::ParseSettingsDoc(text, path, "Task", Leaves());
  for (const auto& s : doc.settings) {
    size::Setting setting{s.key, s.value, size::Origin{path, s.line, s.col, ""}};
    if (s.key == "config" && !s.value.empty() && s.value[0] != '/') {
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos) setting.value = path.substr(0, slash + 1) + s.value;
    }
    size::Apply(t, setting);
  }
}

// Reads the config.json the settings named, if any, into the task's architecture.
void LoadConfig(size::Task& t, Context& ctx) {
  if (t.config_path.empty()) return;
  const std::string text = ReadFile(ctx, t.config_path, size::kMaxConfigBytes, "a config.json");
  t.arch = size::ParseHfConfig(text, t.config_path);
  t.model_source = "config " + t.config_path;
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
    ApplyDocument(t, ReadFile(ctx, o.task_file, manifest::kMaxManifestBytes, "a task"), o.task_file);
  for (const auto& k : size::SettingKeys()) {
    auto it = o.options.find(k.key);
    if (it == o.options.end() || it->second->count() == 0) continue;
    const std::string& v = o.values.at(k.key);
    size::Apply(t, size::Setting{k.key, k.boolean && v.empty() ? "true" : v, size::Origin{"", 0, 0, k.flag}});
  }
  LoadConfig(t, ctx);
  size::Finish(t);
  const size::Estimate e = size::EstimateTask(t);
  size::FitAnswer fit;
  if (t.gpu_memory > 0) {
    fit.gpu_memory = t.gpu_memory;
    fit.fit = size::SmallestFit(t, t.gpu_memory);
  }
  if (ctx.opts.json)
    PrintJson(ctx, size::RenderJson(t, e, fit));
  else
    *ctx.out << size::RenderText(t, e, fit, ctx.opts.verbose, ctx.use_color());
  return kExitOk;
}

}  // namespace

void ValidateTaskDocument(const std::string& text, const std::string& path, Context& ctx) {
  size::Task t;
  ApplyDocument(t, text, path);
  LoadConfig(t, ctx);
  size::Finish(t);
  size::EstimateTask(t);
}

void RegisterSize(CLI::App& app, Context& ctx, int& exit_code) {
  auto o = std::make_shared<SizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "size", "The GPU memory a training task needs per GPU, term by term (docs/size.md)");
  sub->add_option("--task", o->task_file, "A kind: Task YAML document; flags override its values");
  sub->add_flag("--list-models", o->list_models, "The shipped model table and its sources");
  for (const auto& k : size::SettingKeys()) {
    std::string& value = o->values[k.key];
    CLI::Option* opt = sub->add_option(k.flag, value, k.help)->group("Task");
    if (k.boolean) opt->expected(0, 1)->type_name("[true|false]");  // alone: true
    o->options[k.key] = opt;
  }
  sub->callback([&ctx, &exit_code, o] { exit_code = RunSize(ctx, *o); });
}

}  // namespace gp::cli
