// Files compiled into the binary from manifests/ and templates/ (see cmake/embed.cmake).
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace gp {

struct EmbeddedFile {
  const char* path;  // relative to the source tree, e.g. "manifests/stacks/hopper-r580-cuda13.0.yaml"
  const char* data;  // NUL-terminated contents
  std::size_t size;
};

// The table ends with an entry whose path is nullptr.
extern const EmbeddedFile kEmbeddedFiles[];

// Returns the contents of an embedded file, or nullptr when no such file was embedded.
const EmbeddedFile* FindEmbedded(std::string_view path);

// Every embedded file whose path starts with `prefix` (e.g. "manifests/stacks/"), in path order.
std::vector<const EmbeddedFile*> ListEmbedded(std::string_view prefix);

}  // namespace gp
