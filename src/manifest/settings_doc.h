// Documents whose body is a tree of plain settings (`kind: Task`, read by `gpuprep size --task` and
// `manifest validate`), read as strictly as stacks: the same YAML front end (no duplicate keys, anchors or
// tags; UTF-8 without control characters; size and depth limits). The caller names the leaves it knows as
// dotted paths ("lora.rank"); maps in between are walked, anything else is an error at its position.
// What the values mean is the caller's business (src/size/settings.h).
#pragma once
#include <string>
#include <vector>

namespace gp::manifest {

struct DocSetting {
  std::string key;    // dotted path, one of the caller's leaves
  std::string value;  // the scalar; a list of scalars joined with ','
  int line = 0, col = 0;
};

struct SettingsDoc {
  std::string name;                  // metadata.name
  std::string description;           // metadata.description ("" when absent)
  std::vector<DocSetting> settings;  // in document order
};

// Throws gp::FileError "PATH:LINE:COL: message": apiVersion/kind (must be `kind`), metadata (name
// required), unknown keys (`unknown key "rnak" (did you mean "rank"?)`), a map where a value belongs, a
// nested list, a list item that is not a scalar or contains ','.
SettingsDoc ParseSettingsDoc(const std::string& text, const std::string& display_path,
                             const std::string& kind, const std::vector<std::string>& leaves);

}  // namespace gp::manifest
