// The one way a verb prints a JSON document: always valid JSON. A string that is not valid UTF-8 (a
// probed file, a snapshot, a manifest read before validation) gets each ill-formed byte replaced by U+FFFD,
// and one warning on stderr says how many were replaced. Key order is kept (ordered_json stays ordered).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>

#include "cli/context.h"
#include "util/input.h"

namespace gp::cli {

// Replaces ill-formed UTF-8 in every string and key of `doc`; returns how many bytes were replaced.
template <typename Json>
size_t ReplaceInvalidUtf8InJson(Json& doc) {
  size_t total = 0;
  if (doc.is_string()) {
    auto& s = doc.template get_ref<std::string&>();
    if (InvalidUtf8At(s)) {
      size_t n = 0;
      s = ReplaceInvalidUtf8(s, &n);
      total += n;
    }
  } else if (doc.is_array()) {
    for (auto& item : doc) total += ReplaceInvalidUtf8InJson(item);
  } else if (doc.is_object()) {
    bool bad_key = false;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      total += ReplaceInvalidUtf8InJson(it.value());
      bad_key = bad_key || InvalidUtf8At(it.key()).has_value();
    }
    if (bad_key) {  // rebuild in the same order with the keys repaired
      Json fixed = Json::object();
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        size_t n = 0;
        fixed[ReplaceInvalidUtf8(it.key(), &n)] = std::move(it.value());
        total += n;
      }
      doc = std::move(fixed);
    }
  }
  return total;
}

// Prints `doc` (indent -1: one line) and a newline on ctx.out, replacing as above.
template <typename Json>
void PrintJson(Context& ctx, Json doc, int indent = 2) {
  const size_t replaced = ReplaceInvalidUtf8InJson(doc);
  *ctx.out << doc.dump(indent, ' ', false, Json::error_handler_t::replace) << "\n";
  if (replaced)
    *ctx.err << "gpuprep: warning: " << replaced
             << " byte(s) that were not valid UTF-8 were replaced with U+FFFD in the JSON output\n";
}

}  // namespace gp::cli
