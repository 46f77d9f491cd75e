// The fleet report's four forms. Pure functions of the Report; every host-supplied string is escaped for
// its medium (terminal control characters dropped, Markdown table cells, JSON, HTML).
#pragma once
#include <string>

#include "fleet/model.h"

namespace gp::fleet {

// A summary line, the hosts x layers table, then each finding group with its hosts and its fix once.
std::string RenderText(const Report& r);
// The same as GitHub-flavoured Markdown tables.
std::string RenderMarkdown(const Report& r);
// {"gpuprep","summary":{hosts,failing,warning,ok},"layers":[...],"hosts":[...],"findings":[...]}
std::string RenderJson(const Report& r);
// One self-contained HTML page (inline CSS and script, no external resource, a CSP that forbids any):
// hosts x layers coloured by status, a filter box and a status selector; `#filter=TEXT&status=fail`
// in the URL presets them.
std::string RenderHtml(const Report& r);

// Printable text: control characters (and ESC) replaced by '?', so a snapshot cannot drive the terminal.
std::string Printable(const std::string& s);

}  // namespace gp::fleet
