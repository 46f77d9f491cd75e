// ApplyTaskDocument and StackTask (task.h).
#include "layers/task.h"

#include "manifest/settings_doc.h"
#include "size/estimate.h"
#include "size/settings.h"
#include "util/error.h"

namespace gp::layers {
namespace {

std::vector<std::string> Leaves() {
  std::vector<std::string> keys;
  for (const auto& k : size::SettingKeys()) keys.emplace_back(k.key);
  return keys;
}

}  // namespace

std::string ApplyTaskDocument(size::Task& t, const std::string& text, const std::string& path) {
  const manifest::SettingsDoc doc = manifest::ParseSettingsDoc(text, path, "Task", Leaves());
  for (const auto& s : doc.settings) {
    size::Setting setting{s.key, s.value, size::Origin{path, s.line, s.col, ""}};
    if (s.key == "config" && !s.value.empty() && s.value[0] != '/') {
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos) setting.value = path.substr(0, slash + 1) + s.value;
    }
    size::Apply(t, setting);
  }
  return doc.name;
}

std::optional<NamedTask> StackTask(const manifest::Stack& s) {
  if (!s.workload.task) return std::nullopt;
  const manifest::WorkloadTask& named = *s.workload.task;
  NamedTask out;
  out.path = named.path;
  size::Task& t = out.task;
  out.name = ApplyTaskDocument(t, named.text, named.path);
  if (auto it = t.origins.find("config"); it != t.origins.end())
    it->second.Fail(
        "a task named by a stack gives its model as model: NAME or params: N (a config.json is read only by "
        "gpuprep size --task)");
  // The model: a table row, a parameter count, a recommender's dense layers, or a multimodal preset or
  // contrastive towers (which name their parts).
  bool described = false;
  for (const char* key :
       {"model", "params", "recommender.dense_layers", "multimodal.preset", "multimodal.text"})
    described = described || t.origins.count(key) > 0;
  if (!described)
    throw FileError(named.path, 1, 1,
                    "name the model: model: NAME (gpuprep size --list-models), params: N, "
                    "recommender.dense_layers or multimodal.preset");
  size::Finish(t);
  size::EstimateTask(t);
  return out;
}

}  // namespace gp::layers
