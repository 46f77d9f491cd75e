#include "accept/render.h"

#include <algorithm>
#include <sstream>

#include "accept/format.h"
#include "util/html.h"
#include "util/input.h"

namespace gp::accept {
namespace {

std::string T(const std::string& s) { return TerminalSafe(s); }

// Markdown text from outside: printable, and every character Markdown could read as markup escaped.
std::string Md(const std::string& s) {
  std::string out;
  for (char c : TerminalSafe(s)) {
    if (std::string_view("\\`*_{}[]<>()#+!|~&").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string Where(const Check& c) {
  if (!c.path.empty()) return TerminalSafe(c.path);
  if (c.gpu >= 0 && c.peer >= 0) return std::to_string(c.gpu) + "-" + std::to_string(c.peer);
  if (c.gpu >= 0) return std::to_string(c.gpu);
  return "all";
}

std::string Measured(const Check& c) {
  if (c.measured) return FormatFigure(*c.measured) + " " + c.unit;
  return c.found;
}

std::string Level(const std::optional<Value>& v) {
  if (!v) return "-";
  return FormatFigure(v->value) + (v->kind == "derived"    ? " (derived)"
                                   : v->kind == "measured" ? " (measured)"
                                                           : "");
}

std::string Expected(const Check& c) { return c.expected.empty() ? Level(c.typical) : c.expected; }

// The sources the checks cite (quoted and measured), or the derived values' rules, each once.
std::vector<std::string> Sources(const Result& r, bool derived = false) {
  std::vector<std::string> out;
  for (const auto& c : r.checks)
    for (const auto* v : {&c.typical, &c.floor, &c.peak})
      if (*v && ((*v)->kind == "derived") == derived &&
          std::find(out.begin(), out.end(), (*v)->source) == out.end())
        out.push_back((*v)->source);
  return out;
}

nlohmann::ordered_json ValueJson(const std::optional<Value>& v) {
  if (!v) return nullptr;
  nlohmann::ordered_json j;
  j["value"] = v->value;
  j["unit"] = v->unit;
  j["kind"] = v->kind;
  j["source"] = v->source;
  if (v->size) j["message_bytes"] = v->size;
  return j;
}

const char* Css(Status s) {
  switch (s) {
    case Status::kPass:
      return "s-ok";
    case Status::kWarn:
      return "s-warn";
    case Status::kFail:
    case Status::kInvalid:
      return "s-fail";
    default:
      return "s-skip";
  }
}

const char* Colour(Status s) {
  switch (s) {
    case Status::kPass:
      return "\033[32m";
    case Status::kWarn:
      return "\033[33m";
    case Status::kFail:
    case Status::kInvalid:
      return "\033[1;31m";
    default:
      return "\033[2m";
  }
}

std::string Pad(const std::string& s, size_t w) {
  return s + std::string(w > s.size() ? w - s.size() : 0, ' ');
}

std::string Identity(const Recording& rec) {
  if (rec.gpus.empty() && rec.run.topology.empty()) return rec.run.host + ": storage only";
  std::string board =
      rec.gpus.empty() ? "no GPU" : rec.gpus.front().name + " (" + rec.gpus.front().pci_device_id + ")";
  return rec.run.host + ": " + std::to_string(rec.gpus.size()) + "x " + board + ", " + rec.run.topology +
         ", driver " + rec.run.driver_version;
}

}  // namespace

std::string VerdictLine(const Result& r) {
  if (r.verdict == "fail")
    return "verdict: fail (" + std::to_string(r.failed) + " failed, " + std::to_string(r.warned) +
           " below typical)";
  if (r.verdict == "incomplete")
    return "verdict: incomplete (" + std::to_string(r.incomplete) +
           " checks skipped or without expectation; nothing failed; --strict makes this exit 1)";
  return "verdict: pass" + (r.warned ? " (" + std::to_string(r.warned) + " below typical)" : std::string());
}

std::string RenderTable(const Recording& rec, const Result& r, bool color) {
  std::vector<std::vector<std::string>> rows{
      {"CHECK", "GPU", "STATUS", "MEASURED", "EXPECTED", "FLOOR", "PEAK"}};
  for (const auto& c : r.checks)
    rows.push_back({c.group + " " + c.name, Where(c), StatusName(c.status), T(Measured(c)), T(Expected(c)),
                    Level(c.floor), Level(c.peak)});
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
  std::ostringstream o;
  o << "accept: " << T(Identity(rec)) << "\n";
  o << "measured " << T(rec.run.started_at) << " to " << T(rec.run.finished_at) << "\n\n";
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) {
      std::string cell = Pad(rows[k][i], i + 1 < rows[k].size() ? w[i] + 2 : 0);
      if (i == 2 && k > 0 && color)
        cell = Colour(r.checks[k - 1].status) + rows[k][i] + "\033[0m" + cell.substr(rows[k][i].size());
      line += cell;
    }
    o << line << "\n";
    if (k > 0 && !r.checks[k - 1].reason.empty() && r.checks[k - 1].status != Status::kPass)
      o << "    " << T(r.checks[k - 1].reason) << "\n";
  }
  o << "\n" << VerdictLine(r) << "\n";
  return o.str();
}

nlohmann::ordered_json ReportJson(const Recording& rec, const Result& r) {
  nlohmann::ordered_json doc;
  doc["gpuprep"] = GPUPREP_VERSION;
  doc["verdict"] = r.verdict;
  auto& s = doc["server"];
  s["host"] = rec.run.host;
  s["driver_version"] = rec.run.driver_version;
  s["stack"] = rec.run.stack;
  s["topology"] = rec.run.topology;
  s["started_at"] = rec.run.started_at;
  s["finished_at"] = rec.run.finished_at;
  s["source"] = rec.run.source;
  s["gpus"] = nlohmann::ordered_json::array();
  for (const auto& g : rec.gpus)
    s["gpus"].push_back({{"gpu", g.index},
                         {"name", g.name},
                         {"pci_device_id", g.pci_device_id},
                         {"serial", g.serial},
                         {"uuid", g.uuid},
                         {"memory_total_mib", g.memory_total_mib}});
  doc["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : r.checks) {
    nlohmann::ordered_json j;
    j["group"] = c.group;
    j["name"] = c.name;
    j["gpu"] = c.gpu >= 0 ? nlohmann::ordered_json(c.gpu) : nullptr;
    j["peer"] = c.peer >= 0 ? nlohmann::ordered_json(c.peer) : nullptr;
    j["status"] = StatusName(c.status);
    j["measured"] = c.measured ? nlohmann::ordered_json(*c.measured) : nullptr;
    j["unit"] = c.unit;
    j["found"] = c.found;
    j["expected"] = c.expected;
    j["typical"] = ValueJson(c.typical);
    j["floor"] = ValueJson(c.floor);
    j["peak"] = ValueJson(c.peak);
    j["message_bytes"] = c.size ? nlohmann::ordered_json(c.size) : nullptr;
    j["reason"] = c.reason;
    if (c.group == "storage") {
      j["path"] = c.path;
      j["io"] = c.io.empty() ? nullptr : nlohmann::ordered_json(c.io);
      j["bytes"] = c.bytes ? nlohmann::ordered_json(c.bytes) : nullptr;
    }
    doc["checks"].push_back(j);
  }
  doc["summary"] = {{"failed", r.failed}, {"warned", r.warned}, {"incomplete", r.incomplete}};
  return doc;
}

std::string RenderMarkdown(const Recording& rec, const Result& r, const std::string& generated_at) {
  std::ostringstream o;
  o << "# Acceptance report: " << Md(rec.run.host) << "\n\n**" << Md(VerdictLine(r)) << "**\n\n";
  o << "- Driver: " << Md(rec.run.driver_version)
    << "\n- Stack: " << Md(rec.run.stack.empty() ? "none recorded" : rec.run.stack)
    << "\n- Topology: " << Md(rec.run.topology) << "\n- Measured: " << Md(rec.run.started_at) << " to "
    << Md(rec.run.finished_at) << "\n";
  if (!rec.run.source.empty()) o << "- Numbers from: " << Md(rec.run.source) << "\n";
  if (!generated_at.empty()) o << "- Report written: " << Md(generated_at) << "\n";
  o << "\n## GPUs\n\n| GPU | board | PCI id | serial | UUID | memory (MiB) |\n|---|---|---|---|---|---|\n";
  for (const auto& g : rec.gpus)
    o << "| " << g.index << " | " << Md(g.name) << " | " << Md(g.pci_device_id) << " | " << Md(g.serial)
      << " | " << Md(g.uuid) << " | " << g.memory_total_mib << " |\n";
  o << "\n## Checks\n\n| check | GPU | status | measured | expected | floor | peak | note |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : r.checks)
    o << "| " << c.group << " " << c.name << " | " << Md(Where(c)) << " | " << StatusName(c.status) << " | "
      << Md(Measured(c)) << " | " << Md(Expected(c)) << " | " << Level(c.floor) << " | " << Level(c.peak)
      << " | " << Md(c.reason) << " |\n";
  o << "\n## Sources\n\n";
  for (const auto& rule : Sources(r, true)) o << "- derived: `" << rule << "` (gpuprep's own rule)\n";
  for (const auto& s : Sources(r)) o << "- `" << s << "`\n";
  return o.str();
}

std::string RenderHtml(const Recording& rec, const Result& r, const std::string& generated_at) {
  const auto E = [](const std::string& s) { return HtmlEscape(s); };
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'\">\n"
    << "<title>gpuprep acceptance report: " << E(rec.run.host) << "</title>\n<style>"
    << "body{font:14px/1.4 "
       "system-ui,sans-serif;margin:1.5em;color:#1d1d1f}table{border-collapse:collapse;margin:.6em 0}"
       "th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left}thead th{background:#f0f0f3}"
       ".s-ok{background:#dcf5e3}.s-warn{background:#fff1c2}.s-fail{background:#fbd5d5}.s-skip{background:#"
       "eee}"
    << "</style></head>\n<body>\n<h1>Acceptance report: " << E(rec.run.host) << "</h1>\n";
  o << "<p id=\"verdict\" data-verdict=\"" << E(r.verdict) << "\"><b>" << E(VerdictLine(r))
    << "</b></p>\n<ul>\n"
    << "<li>Driver: " << E(rec.run.driver_version)
    << "</li>\n<li>Stack: " << E(rec.run.stack.empty() ? "none recorded" : rec.run.stack)
    << "</li>\n<li>Topology: " << E(rec.run.topology) << "</li>\n<li>Measured: " << E(rec.run.started_at)
    << " to " << E(rec.run.finished_at) << "</li>\n";
  if (!rec.run.source.empty()) o << "<li>Numbers from: " << E(rec.run.source) << "</li>\n";
  if (!generated_at.empty()) o << "<li>Report written: " << E(generated_at) << "</li>\n";
  o << "</ul>\n<h2>GPUs</h2>\n<table id=\"gpus\"><thead><tr><th>GPU</th><th>board</th><th>PCI "
       "id</th><th>serial</th>"
       "<th>UUID</th><th>memory (MiB)</th></tr></thead><tbody>\n";
  for (const auto& g : rec.gpus)
    o << "<tr class=\"gpu\"><td>" << g.index << "</td><td>" << E(g.name) << "</td><td>" << E(g.pci_device_id)
      << "</td><td>" << E(g.serial) << "</td><td>" << E(g.uuid) << "</td><td>" << g.memory_total_mib
      << "</td></tr>\n";
  o << "</tbody></table>\n<h2>Checks</h2>\n<table "
       "id=\"checks\"><thead><tr><th>check</th><th>GPU</th><th>status</th>"
       "<th>measured</th><th>expected</th><th>floor</th><th>peak</th><th>note</th></tr></thead><tbody>\n";
  for (const auto& c : r.checks)
    o << "<tr class=\"check\" data-status=\"" << StatusName(c.status) << "\"><td>"
      << E(c.group + " " + c.name) << "</td><td>" << E(Where(c)) << "</td><td class=\"" << Css(c.status)
      << "\">" << StatusName(c.status) << "</td><td>" << E(Measured(c)) << "</td><td>" << E(Expected(c))
      << "</td><td>" << E(Level(c.floor)) << "</td><td>" << E(Level(c.peak)) << "</td><td>" << E(c.reason)
      << "</td></tr>\n";
  o << "</tbody></table>\n<h2>Sources</h2>\n<ul id=\"sources\">\n";
  for (const auto& s : Sources(r)) o << "<li><code>" << E(s) << "</code></li>\n";
  for (const auto& rule : Sources(r, true))
    o << "<li>derived: <code>" << E(rule) << "</code> (gpuprep's own rule)</li>\n";
  o << "</ul>\n</body></html>\n";
  return o.str();
}

}  // namespace gp::accept
