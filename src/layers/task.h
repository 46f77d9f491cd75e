// A `kind: Task` document as a size::Task (src/size/settings.h): the one reader of Task documents, for
// `gpuprep size --task`, `manifest validate` and a stack's `workload.task` (doctor's host layer).
#pragma once
#include <optional>
#include <string>

#include "manifest/model.h"
#include "size/task.h"

namespace gp::layers {

// Applies the document's settings to `t`, each at its position; a relative `config:` is taken beside the
// document (read later by the caller). Returns the document's metadata.name. Throws gp::FileError
// "PATH:LINE:COL: message".
std::string ApplyTaskDocument(size::Task& t, const std::string& text, const std::string& path);

struct NamedTask {
  std::string name;  // metadata.name
  std::string path;  // the file, as errors and findings name it
  size::Task task;   // finished (size::Finish)
};

// The task the stack's `workload.task` names, its settings applied and checked as `gpuprep size` checks them
// (size::Finish, and one estimate); nullopt when the stack names none. A task named by a stack gives its
// model as `model:` or `params:`: it reads no config.json. Throws gp::FileError at the wrong value (exit 2);
// the verbs call it when they load a stack, so a bad task stops them before anything runs.
std::optional<NamedTask> StackTask(const manifest::Stack& s);

}  // namespace gp::layers
