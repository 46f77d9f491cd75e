// `kind: Task` documents are read by `gpuprep size --task` and checked by `gpuprep manifest validate`
// through the same code (cli/size.cc), so both report the same errors at the same positions.
#pragma once
#include <string>

#include "cli/context.h"

namespace gp::cli {

// Parses the document, applies every setting, reads a `config:` it names, and checks the combination by
// estimating it once. Throws gp::FileError / gp::Error (exit 2).
void ValidateTaskDocument(const std::string& text, const std::string& path, Context& ctx);

}  // namespace gp::cli
