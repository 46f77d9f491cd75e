// The terminal rendering of a doctor run. Colour only when asked (Context::use_color(): a terminal, no
// --json, NO_COLOR unset); widths are measured before colour codes are added.
#include <algorithm>
#include <sstream>

#include "doctor/report.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::doctor {
namespace {

using verdict::Status;

// Every value from a host, a snapshot or a manifest is escaped before it reaches the terminal.
std::string T(const std::string& s) { return TerminalSafe(s); }

const char* Colour(Status s) {
  switch (s) {
    case Status::kOk:
      return "\033[32m";
    case Status::kWarn:
      return "\033[33m";
    case Status::kFail:
      return "\033[1;31m";
    case Status::kSkip:
      return "\033[2m";
  }
  return "";
}

std::string StatusCell(Status s, size_t width, bool color) {
  std::string name = verdict::StatusName(s);
  std::string padded = name + std::string(width > name.size() ? width - name.size() : 0, ' ');
  if (!color) return padded;
  return std::string(Colour(s)) + name + "\033[0m" + padded.substr(name.size());
}

std::string Pad(const std::string& s, size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

void ComponentSource(std::ostringstream& out, const char* name, const probe::Component& c) {
  out << "  " << Pad(name, 8);
  if (!c.found) {
    out << "not found";
  } else {
    out << T(c.version) << " from " << (c.source.empty() ? "?" : T(c.source));
    if (!c.path.empty()) out << " (" << T(c.path) << ")";
  }
  out << "\n";
  for (const auto& n : c.notes) out << "            " << T(n) << "\n";
}

void Verbose(std::ostringstream& out, const manifest::Stack& stack, const probe::HostFacts& host) {
  out << "\nstack " << T(stack.name) << " from " << (stack.source.empty() ? "?" : T(stack.source));
  if (stack.extends_chain.size() > 1) out << " (extends " << T(Join(stack.extends_chain, " <- ")) << ")";
  out << "\n";
  size_t w = 0;
  for (const auto& [path, origin] : stack.origins) w = std::max(w, path.size());
  for (const auto& [path, origin] : stack.origins) out << "  " << Pad(path, w) << "  " << T(origin) << "\n";
  out << "host facts from " << (host.live ? "the live host" : "a --root tree or snapshot") << "\n";
  std::string drv = host.driver.module.loaded ? host.driver.module.version + " from the loaded kernel module"
                                              : std::string("no kernel module loaded");
  if (!host.driver.userspace_version.empty())
    drv += "; userspace " + host.driver.userspace_version + " from " + host.driver.userspace_source;
  out << "  " << Pad("driver", 8) << T(drv) << "\n";
  ComponentSource(out, "cuda", host.cuda);
  ComponentSource(out, "cudnn", host.cudnn);
  ComponentSource(out, "nccl", host.nccl);
  if (!host.probe_notes.empty()) {
    out << "probe notes:\n";
    for (const auto& n : host.probe_notes) out << "  " << T(n) << "\n";
  }
}

}  // namespace

std::string RenderTable(const manifest::Stack& stack, const probe::HostFacts& host,
                        const std::vector<verdict::LayerReport>& reports, const TableOptions& options) {
  std::ostringstream out;
  if (options.title.empty()) {
    std::string os =
        host.os.pretty_name.empty() ? host.os.id + " " + host.os.version_id : host.os.pretty_name;
    out << "gpuprep doctor: stack " << T(stack.name) << " on " << T(os) << " (" << T(host.kernel) << ")\n\n";
  } else {
    out << T(options.title) << "\n\n";
  }

  size_t wn = 5, ws = 6, wf = 5;
  for (const auto& r : reports) {
    wn = std::max(wn, r.name.size());
    wf = std::max(wf, T(r.found.value_or("-")).size());
  }
  const std::string indent(wn + 2 + ws + 2, ' ');
  out << Pad("LAYER", wn) << "  " << Pad("STATUS", ws) << "  " << Pad("FOUND", wf) << "  WANTED\n";
  for (const auto& r : reports) {
    std::string row = Pad(r.name, wn) + "  " + StatusCell(r.status, ws, options.color) + "  " +
                      Pad(T(r.found.value_or("-")), wf) + "  " + T(r.wanted);
    out << std::string(Trim(row)) << "\n";
    for (const auto& f : r.findings) {
      if (f.status == Status::kOk && !options.verbose) continue;
      out << indent << T(f.message) << "\n";
      if (f.fix && (f.status == Status::kWarn || f.status == Status::kFail))
        out << indent << "fix: " << T(*f.fix) << "\n";
    }
  }
  Summary s = Summarize(reports);
  out << "\n" << s.ok << " ok, " << s.warn << " warn, " << s.fail << " fail, " << s.skip << " skip\n";
  if (options.verbose && options.title.empty()) Verbose(out, stack, host);
  return out.str();
}

}  // namespace gp::doctor
