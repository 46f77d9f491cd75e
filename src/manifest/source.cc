#include "manifest/source.h"

#include <algorithm>

#include "manifest/loader.h"
#include "sys/fs.h"
#include "sys/host_info.h"
#include "util/embedded.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {

SourceShape ShapeOf(const std::string& written) {
  const size_t sep = written.find("://");
  if (sep != std::string::npos && sep > 0 && written.find('/') == sep + 1) return SourceShape::kUrl;
  if (written.find('/') != std::string::npos || EndsWith(written, ".yaml") || EndsWith(written, ".yml"))
    return SourceShape::kPath;
  return SourceShape::kName;
}

std::string EmbeddedNameHint(const std::string& word) {
  if (auto guess = DidYouMean(word, EmbeddedStackNames())) return " (did you mean \"" + *guess + "\"?)";
  return " (embedded stacks: " + Join(EmbeddedStackNames(), ", ") + ")";
}

ManifestSource ParseManifestSource(const std::string& written, const sys::Fs* fs) {
  if (written.empty()) throw UsageError("empty stack name");
  ManifestSource s;
  s.written = written;
  const SourceShape shape = ShapeOf(written);
  if (shape == SourceShape::kUrl) {
    s.kind = ManifestSource::Kind::kUrl;
    s.value = written;
    return s;
  }
  const std::string absolute = sys::AbsoluteFromCwd(written);
  if (shape == SourceShape::kName) {
    const auto names = EmbeddedStackNames();
    if (std::find(names.begin(), names.end(), written) != names.end()) {
      s.kind = ManifestSource::Kind::kEmbedded;
      s.value = written;
      return s;
    }
    if (!(fs && fs->Exists(absolute)))
      throw UsageError("no embedded stack or file named " + QuoteToken(written) + EmbeddedNameHint(written));
  }
  s.kind = ManifestSource::Kind::kFile;
  s.value = absolute;
  return s;
}

}  // namespace gp::manifest
