#include "launch/template.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/embedded.h"
#include "util/strings.h"

namespace gp::launch {

std::string YamlQuote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string EmbeddedTemplate(const std::string& name) {
  const EmbeddedFile* f = FindEmbedded("templates/" + name);
  if (!f) throw std::logic_error("template not embedded: templates/" + name);
  return std::string(f->data, f->size);
}

namespace {
std::string Lookup(const std::map<std::string, std::string>& vars, const std::string& key) {
  auto it = vars.find(key);
  if (it == vars.end()) throw std::logic_error("template placeholder without a value: {{" + key + "}}");
  return it->second;
}
}  // namespace

std::string ExpandTemplate(const std::string& tmpl, const std::map<std::string, std::string>& vars) {
  std::string out;
  for (const std::string& line : Split(tmpl, '\n')) {
    const std::string_view t = Trim(line);
    if (StartsWith(t, "{{") && EndsWith(t, "}}") && t.find("{{", 2) == std::string_view::npos) {
      const std::string indent = line.substr(0, line.find("{{"));
      const std::string value = Lookup(vars, std::string(t.substr(2, t.size() - 4)));
      if (value.empty()) continue;
      // Lines are kept as they are (a shell-quoted value may hold a newline); only indentation is added.
      for (const std::string& l : Split(value, '\n')) out += (l.empty() ? "" : indent) + l + "\n";
      continue;
    }
    size_t pos = 0;
    while (true) {
      const size_t open = line.find("{{", pos);
      if (open == std::string::npos) break;
      const size_t close = line.find("}}", open);
      if (close == std::string::npos) break;
      out += line.substr(pos, open - pos) + Lookup(vars, line.substr(open + 2, close - open - 2));
      pos = close + 2;
    }
    out += line.substr(pos) + "\n";
  }
  while (EndsWith(out, "\n\n")) out.pop_back();
  return out;
}

}  // namespace gp::launch
