// `kind: Task` and `kind: Prices` documents are read by `gpuprep size --task / --prices`, `kind: Offer` by
// `gpuprep accept --expect`, and all are checked by `gpuprep manifest validate` through the same code
// (cli/size.cc, cli/size_inputs.cc, cli/accept.cc), so both report the same errors at the same positions.
#pragma once
#include <string>

#include "cli/context.h"

namespace gp::cli {

// Parses the document, applies every setting, reads a `config:` it names, and checks the combination by
// estimating it once. Throws gp::FileError / gp::Error (exit 2).
void ValidateTaskDocument(const std::string& text, const std::string& path, Context& ctx);

// Parses a Prices document and checks that every entry names a GPU of the catalogue. Throws gp::FileError.
void ValidatePricesDocument(const std::string& text, const std::string& path);

// Parses an Offer document (`gpuprep accept --expect FILE`) against the catalogue's boards, as accept reads
// it. Throws gp::FileError.
void ValidateOfferDocument(const std::string& text, const std::string& path);

}  // namespace gp::cli
