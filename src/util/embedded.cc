#include "util/embedded.h"

namespace gp {

const EmbeddedFile* FindEmbedded(std::string_view path) {
  for (const EmbeddedFile* f = kEmbeddedFiles; f->path; ++f)
    if (path == f->path) return f;
  return nullptr;
}

std::vector<const EmbeddedFile*> ListEmbedded(std::string_view prefix) {
  std::vector<const EmbeddedFile*> out;
  for (const EmbeddedFile* f = kEmbeddedFiles; f->path; ++f)
    if (std::string_view(f->path).substr(0, prefix.size()) == prefix) out.push_back(f);
  return out;
}

}  // namespace gp
