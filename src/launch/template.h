// A minimal text template for the launch renderers: "{{key}}" is replaced by vars[key]. A placeholder
// alone on its line is a block: a multi-line value is indented like the placeholder, and an empty value
// removes the line. Values are inserted verbatim (the renderer quotes them for YAML or shell first).
#pragma once
#include <map>
#include <string>

namespace gp::launch {

// Throws std::logic_error for a placeholder with no value (a bug in the renderer or the template).
std::string ExpandTemplate(const std::string& tmpl, const std::map<std::string, std::string>& vars);

// The embedded templates/NAME; throws std::logic_error when it was not embedded.
std::string EmbeddedTemplate(const std::string& name);

// A YAML double-quoted scalar for any string (JSON string syntax, which YAML 1.2 reads the same).
std::string YamlQuote(const std::string& s);

}  // namespace gp::launch
