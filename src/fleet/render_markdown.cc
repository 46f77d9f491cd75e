#include <algorithm>
#include <sstream>

#include "fleet/render.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::fleet {
namespace {

// Text in a GitHub-flavoured Markdown table cell, shown as written and never as markup. After TerminalSafe
// (one line, no control character): every ASCII punctuation character that starts markup (links and images `[
// ] ( )
// !`, HTML and autolinks `< >`, entities `&`, emphasis and strike-through `* _ ~`, code `` ` ``, the escape
// itself `\`, and `|`, which GFM splits cells on) is backslash-escaped (CommonMark 0.30, section 2.4: any
// ASCII punctuation may be). GFM's extended autolinks need no markup at all, so their triggers are broken
// too: `:` (http://, https://, ftp://) is escaped, so is the `.` of "www.", and an e-mail address
// (user@host.tld) is split by an empty HTML comment after its `@` (the autolink extension reads one text node
// at a time and an escape does not split one). See https://github.github.com/gfm/ sections 6.9 (autolinks)
// and 4.10 (tables).
std::string Cell(const std::string& s) {
  static const std::string kEscaped = "\\`*_[]()<>!|~&:#";
  const std::string safe = TerminalSafe(s);
  std::string out;
  out.reserve(safe.size() + safe.size() / 4);
  for (size_t i = 0; i < safe.size(); ++i) {
    const char c = safe[i];
    if (kEscaped.find(c) != std::string::npos || (c == '.' && i >= 3 && safe.compare(i - 3, 3, "www") == 0)) {
      out += '\\';
      out += c;
    } else if (c == '@') {
      out += "@<!-- -->";
    } else {
      out += c;
    }
  }
  return out;
}

// A command in a table cell, shown exactly as written (after TerminalSafe): a code span whose backtick fence
// is one longer than the longest run of backticks in it, padded with a space on each side when the text
// starts or ends with a backtick or starts and ends with a space (CommonMark strips one such space from each
// side), and
// `|` as `\|` (GFM reads that escape inside code spans in a table too; nothing else is escaped in a code
// span).
std::string Code(const std::string& s) {
  const std::string safe = TerminalSafe(s);
  if (safe.empty()) return "";
  size_t longest = 0, run = 0;
  for (char c : safe) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool all_spaces = safe.find_first_not_of(' ') == std::string::npos;
  const bool pad = !all_spaces &&
                   (safe.front() == '`' || safe.back() == '`' || (safe.front() == ' ' && safe.back() == ' '));
  std::string out = fence + (pad ? " " : "");
  for (char c : safe) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out + (pad ? " " : "") + fence;
}

}  // namespace

std::string RenderMarkdown(const Report& r) {
  std::ostringstream o;
  o << "# gpuprep fleet report\n\n"
    << r.hosts.size() << " hosts: **" << r.failing << " failing**, " << r.warning << " with warnings, "
    << r.ok << " ok.\n\n| host | os | GPUs |";
  for (const auto& l : r.layers) o << " " << Cell(l) << " |";
  o << "\n|---|---|---|";
  for (size_t i = 0; i < r.layers.size(); ++i) o << "---|";
  o << "\n";
  for (const auto& h : r.hosts) {
    o << "| " << Cell(h.label) << " | " << Cell(h.os) << " | " << h.gpus.size() << " |";
    for (const auto& l : r.layers) {
      auto it = h.layers.find(l);
      std::string s = it == h.layers.end() ? "-" : it->second;
      o << " " << (s == "fail" ? "**fail**" : Cell(s)) << " |";
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
    for (const auto& f : g.fixes)
      if (std::string c = Code(f); !c.empty()) fs.push_back(c);
    o << "| " << Cell(g.status) << " | " << Code(g.code) << " | " << g.hosts.size() << ": " << Join(hs, ", ")
      << " | " << Join(ms, "<br>") << " | " << Join(fs, "<br>") << " |\n";
  }
  return o.str();
}

}  // namespace gp::fleet
