// Where a stack comes from: an embedded stack's name, a file, or a URL. The CLI classifies the argument once
// where it enters (ParseManifestSource); the loader and the commands read the kind instead of guessing again.
#pragma once
#include <string>

namespace gp::sys {
class Fs;
}  // namespace gp::sys

namespace gp::manifest {

// The shape of a written stack reference, before any lookup: `scheme://...` is a URL (CheckUrl decides
// whether gpuprep fetches it), a word with no '/' and no .yaml/.yml ending is a name, anything else a path.
enum class SourceShape { kName, kPath, kUrl };
SourceShape ShapeOf(const std::string& written);

struct ManifestSource {
  enum class Kind { kEmbedded, kFile, kUrl };
  Kind kind = Kind::kEmbedded;
  std::string value;    // the embedded stack's name, the file's absolute path, or the URL
  std::string written;  // as the user wrote it: what errors and origins name

  bool embedded() const { return kind == Kind::kEmbedded; }
  bool url() const { return kind == Kind::kUrl; }
};

// Classifies `written` (--manifest, `manifest show`, a recorded stack): a URL; a name embedded in gpuprep;
// else a file (a bare name only when `fs`, the machine gpuprep runs on, has a file of that name).
// Throws UsageError for an empty argument or a name that is neither embedded nor a file.
ManifestSource ParseManifestSource(const std::string& written, const sys::Fs* fs);

// The names of the embedded stacks, for an error's hint: ` (did you mean "x"?)` or the list.
std::string EmbeddedNameHint(const std::string& word);

}  // namespace gp::manifest
