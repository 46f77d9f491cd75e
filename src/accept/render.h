// What `gpuprep accept` prints: the table (like doctor's), the JSON of docs/json.md ("Acceptance report"),
// and the report a renter attaches to a support ticket (Markdown or a self-contained HTML page): the server's
// identity, each measurement against typical, floor and peak with its source, the timestamps. Every value
// from the recording is escaped for where it goes. Pure: no I/O.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "accept/judge.h"
#include "accept/record.h"

namespace gp::accept {

// One row per check (CHECK GPU STATUS MEASURED TYPICAL FLOOR PEAK), each non-pass reason under its row, then
// the verdict line. Ends with a newline.
std::string RenderTable(const Recording& rec, const Result& r, bool color);

// {"gpuprep", "verdict", "server", "checks", "summary"}, keys in that order.
nlohmann::ordered_json ReportJson(const Recording& rec, const Result& r);

// `generated_at`: when the report was written (RFC 3339 UTC, "" to leave out).
std::string RenderMarkdown(const Recording& rec, const Result& r, const std::string& generated_at);
std::string RenderHtml(const Recording& rec, const Result& r, const std::string& generated_at);

// The last line of the table: "verdict: pass", "verdict: incomplete (...)", "verdict: fail (...)".
std::string VerdictLine(const Result& r);

}  // namespace gp::accept
