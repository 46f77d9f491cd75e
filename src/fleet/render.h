// The fleet report's four forms. Pure functions of the Report; every host-supplied string is escaped for
// its medium: control characters (C0 and C1) and ill-formed UTF-8 as escapes by util's TerminalSafe in text,
// Markdown and HTML; Markdown cells as literal text or code spans; JSON; HTML entities.
#pragma once
#include <ostream>
#include <string>

#include "fleet/model.h"

namespace gp::fleet {

// A summary line, the hosts x layers table, then each finding group with its hosts and its fix once.
std::string RenderText(const Report& r);
// The same as GitHub-flavoured Markdown tables.
std::string RenderMarkdown(const Report& r);
// {"gpuprep","summary":{hosts,failing,warning,ok},"layers":[...],"hosts":[...],"findings":[...]}, written to
// `out` as it is made (a fleet's report can be tens of MB), or returned whole.
void RenderJson(const Report& r, std::ostream& out);
std::string RenderJson(const Report& r);
// One self-contained HTML page (inline CSS and script, no external resource, a CSP that forbids any) that
// stays usable at 10,000 hosts: the finding groups first (each with its fix and its hosts folded away), then
// the hosts x layers table (folded away past 200 hosts), a filter box and a status selector;
// `#filter=TEXT&status=fail` in the URL presets them. Written to `out`, or returned whole.
void RenderHtml(const Report& r, std::ostream& out);
std::string RenderHtml(const Report& r);

}  // namespace gp::fleet
