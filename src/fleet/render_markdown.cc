#include <sstream>

#include "fleet/render.h"
#include "util/strings.h"

namespace gp::fleet {
namespace {

// A Markdown table cell: printable, '|' and '\' escaped, HTML-significant characters as entities
// (GitHub renders inline HTML in cells), newlines impossible (Printable).
std::string Cell(const std::string& s) {
  std::string out;
  for (char c : Printable(s)) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '`':
        out += "\\`";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const Report& r) {
  std::ostringstream o;
  o << "# gpuprep fleet report\n\n"
    << r.hosts.size() << " hosts: **" << r.failing << " failing**, " << r.warning << " with warnings, "
    << r.ok << " ok.\n\n| host | os | GPUs |";
  for (const auto& l : r.layers) o << " " << l << " |";
  o << "\n|---|---|---|";
  for (size_t i = 0; i < r.layers.size(); ++i) o << "---|";
  o << "\n";
  for (const auto& h : r.hosts) {
    o << "| " << Cell(h.label) << " | " << Cell(h.os) << " | " << h.gpus.size() << " |";
    for (const auto& l : r.layers) {
      auto it = h.layers.find(l);
      std::string s = it == h.layers.end() ? "-" : it->second;
      o << " " << (s == "fail" ? "**fail**" : s) << " |";
    }
    o << "\n";
  }
  o << "\n## Findings\n\n";
  if (r.groups.empty()) {
    o << "No warnings or failures.\n";
    return o.str();
  }
  o << "| status | code | hosts | finding | fix |\n|---|---|---|---|---|\n";
  for (const auto& g : r.groups) {
    std::vector<std::string> hs, ms, fs;
    for (const auto& h : g.hosts) hs.push_back(Cell(h));
    for (const auto& m : g.messages) ms.push_back(Cell(m));
    for (const auto& f : g.fixes) fs.push_back("`" + Cell(f) + "`");
    o << "| " << g.status << " | `" << Cell(g.code) << "` | " << g.hosts.size() << ": " << Join(hs, ", ")
      << " | " << Join(ms, "<br>") << " | " << Join(fs, "<br>") << " |\n";
  }
  return o.str();
}

}  // namespace gp::fleet
