#include "cli/json_out.h"

#include <ostream>

#include "util/input.h"

namespace gp::cli {

size_t ReplaceInvalidUtf8InJson(nlohmann::json& doc) {
  size_t total = 0;
  if (doc.is_string()) {
    auto& s = doc.get_ref<std::string&>();
    if (InvalidUtf8At(s)) {
      size_t n = 0;
      s = ReplaceInvalidUtf8(s, &n);
      total += n;
    }
  } else if (doc.is_array()) {
    for (auto& item : doc) total += ReplaceInvalidUtf8InJson(item);
  } else if (doc.is_object()) {
    nlohmann::json fixed = nlohmann::json::object();
    bool renamed = false;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      total += ReplaceInvalidUtf8InJson(it.value());
      if (InvalidUtf8At(it.key())) renamed = true;
    }
    if (renamed) {
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

void PrintJson(Context& ctx, nlohmann::json doc, int indent) {
  const size_t replaced = ReplaceInvalidUtf8InJson(doc);
  *ctx.out << doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (replaced)
    *ctx.err << "gpuprep: warning: " << replaced
             << " byte(s) that were not valid UTF-8 were replaced with U+FFFD in the JSON output\n";
}

}  // namespace gp::cli
