// The one way a verb prints a JSON document: always valid JSON. A string that is not valid UTF-8 (a
// probed file, a snapshot, a manifest read before validation) gets each ill-formed byte replaced by U+FFFD,
// and one warning on stderr says how many were replaced.
#pragma once
#include <nlohmann/json.hpp>

#include "cli/context.h"

namespace gp::cli {

// Replaces ill-formed UTF-8 in every string and key of `doc`; returns how many bytes were replaced.
size_t ReplaceInvalidUtf8InJson(nlohmann::json& doc);

// Prints `doc` (indent -1: one line) and a newline on ctx.out, replacing as above.
void PrintJson(Context& ctx, nlohmann::json doc, int indent = 2);

}  // namespace gp::cli
