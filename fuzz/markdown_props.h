// The Markdown fleet report's property, checked on any Report: no markup from snapshot text. The report is
// read back the way GitHub's renderer reads it (cmark-gfm; tests/integration/differential_markdown.sh runs
// the real one): a table row splits at each '|' not directly after a backslash; a text cell holds only
// escaped markup characters (a backslash before any of \ ` * _ [ ] ( ) < > ! | ~ & : #, the '.' of "www."
// escaped, every '@' followed by an empty comment), and read back it is the host's text as TerminalSafe shows
// it; a fix cell is code spans, each fenced by a run of backticks longer than any inside it, that read back
// as the fix. Aborts (a libFuzzer crash) where the report breaks that.
#pragma once
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fleet/model.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::fuzz {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// The cells of one table row, without the one space the report puts on each side of a cell.
inline std::vector<std::string> RowCells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) {
      cells.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  cells.push_back(cur);
  Require(cells.size() >= 3 && cells.front().empty() && cells.back().empty());
  std::vector<std::string> inner(cells.begin() + 1, cells.end() - 1);
  for (auto& c : inner) {
    Require(c.size() >= 2 && c.front() == ' ' && c.back() == ' ');
    c = c.substr(1, c.size() - 2);
  }
  return inner;
}

// A text cell read back: its escapes undone; aborts on any markup character left bare.
inline std::string TextOf(const std::string& cell) {
  static const char kMarkup[] = "\\`*_[]()<>!|~&:#";
  static const char kEscaped[] = "\\`*_[]()<>!|~&:#.";
  std::string out;
  for (size_t i = 0; i < cell.size(); ++i) {
    const char c = cell[i];
    if (c == '\\') {
      Require(i + 1 < cell.size() && std::strchr(kEscaped, cell[i + 1]) != nullptr);
      out += cell[++i];
    } else if (cell.compare(i, 9, "@<!-- -->") == 0) {
      out += '@';
      i += 8;
    } else {
      Require(c != '@' && std::strchr(kMarkup, c) == nullptr);
      Require(!(c == '.' && i >= 3 && cell.compare(i - 3, 3, "www") == 0));
      out += c;
    }
  }
  return out;
}

// Code spans separated by "<br>", read back; aborts where a span is not one.
inline std::vector<std::string> CodesOf(const std::string& cell) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < cell.size()) {
    if (!out.empty()) {
      Require(cell.compare(i, 4, "<br>") == 0);
      i += 4;
    }
    size_t k = 0;
    while (i + k < cell.size() && cell[i + k] == '`') ++k;
    Require(k > 0);
    const size_t start = i + k;
    size_t p = start, end = std::string::npos;
    while (end == std::string::npos) {
      const size_t q = cell.find('`', p);
      Require(q != std::string::npos);
      size_t r = 0;
      while (q + r < cell.size() && cell[q + r] == '`') ++r;
      if (r == k) end = q;
      p = q + r;
    }
    std::string content = cell.substr(start, end - start);
    Require(!content.empty());
    if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ' &&
        content.find_first_not_of(' ') != std::string::npos)
      content = content.substr(1, content.size() - 2);
    std::string text;
    for (size_t j = 0; j < content.size(); ++j) {
      if (content[j] == '\\' && j + 1 < content.size() && content[j + 1] == '|')
        continue;  // GFM's \| in a table
      text += content[j];
    }
    out.push_back(text);
    i = end + k;
  }
  return out;
}

inline void CheckMarkdownReport(const fleet::Report& r, const std::string& md) {
  const std::vector<std::string> lines = Split(md, '\n');
  size_t at = 0;
  while (at < lines.size() && lines[at].rfind("| host |", 0) != 0) ++at;
  Require(at + 2 + r.hosts.size() <= lines.size());
  at += 2;
  for (const auto& h : r.hosts) {
    const auto cells = RowCells(lines[at++]);
    Require(cells.size() == 3 + r.layers.size());
    Require(TextOf(cells[0]) == TerminalSafe(h.label));
    Require(TextOf(cells[1]) == TerminalSafe(h.os));
  }
  if (r.groups.empty()) return;
  while (at < lines.size() && lines[at].rfind("| status |", 0) != 0) ++at;
  Require(at + 2 + r.groups.size() <= lines.size());
  at += 2;
  for (const auto& g : r.groups) {
    const auto cells = RowCells(lines[at++]);
    Require(cells.size() == 5);
    Require(CodesOf(cells[1]) == std::vector<std::string>{TerminalSafe(g.code)});
    std::vector<std::string> hosts;
    for (const auto& h : g.hosts) hosts.push_back(TerminalSafe(h));
    const std::string count = std::to_string(g.hosts.size()) + ": ";  // the report's own words
    Require(cells[2].compare(0, count.size(), count) == 0);
    Require(TextOf(cells[2].substr(count.size())) == Join(hosts, ", "));
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t br; (br = cells[3].find("<br>", from)) != std::string::npos; from = br + 4)
      parts.push_back(cells[3].substr(from, br - from));
    parts.push_back(cells[3].substr(from));
    if (g.messages.empty())
      Require(cells[3].empty());
    else
      Require(parts.size() == g.messages.size());
    for (size_t i = 0; i < g.messages.size(); ++i) Require(TextOf(parts[i]) == TerminalSafe(g.messages[i]));
    std::vector<std::string> fixes;
    for (const auto& f : g.fixes)
      if (!TerminalSafe(f).empty()) fixes.push_back(TerminalSafe(f));
    Require(CodesOf(cells[4]) == fixes);
  }
}

}  // namespace gp::fuzz
