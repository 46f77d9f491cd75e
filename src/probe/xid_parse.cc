// Parsers of the kernel log's Xid lines (probe/xid.h).
#include <cstdio>

#include "probe/xid.h"

namespace gp::probe {
namespace {}  // namespace

void AddEvent(XidLog& log, XidEvent ev) {
  if (log.events.size() >= kMaxXidEvents) {
    ++log.dropped;
    return;
  }
  log.events.push_back(std::move(ev));
}

std::optional<XidEvent> ParseXidMessage(std::string_view message) {
  auto line = ParseXidLine(message);
  if (!line) return std::nullopt;
  XidEvent ev;
  ev.code = line->code;
  ev.pci = std::move(line->pci);
  ev.pid = std::move(line->pid);
  ev.process = std::move(line->process);
  ev.detail = std::move(line->detail);
  return ev;
}

std::optional<KernLogLine> ParseKernLogLine(std::string_view line) {
  const std::string_view key = " kernel: ";
  const size_t at = line.find(key);
  if (at == std::string_view::npos || at > 128) return std::nullopt;
  std::string_view prefix = line.substr(0, at);  // "Dec  4 15:38:01 host" or "2026-12-04T15:38:01+00:00 host"
  const size_t host_sp = prefix.rfind(' ');
  if (host_sp == std::string_view::npos || host_sp == 0) return std::nullopt;
  KernLogLine out;
  out.time = prefix.substr(0, host_sp);
  while (!out.time.empty() && out.time.back() == ' ') out.time.remove_suffix(1);
  if (out.time.empty() || out.time.size() > 40) return std::nullopt;
  std::string_view msg = line.substr(at + key.size());
  if (!msg.empty() && msg.front() == '[') {  // "[  123.456789] "
    const size_t close = msg.find("] ");
    if (close != std::string_view::npos && close < 24) msg.remove_prefix(close + 2);
  }
  out.message = msg;
  return out;
}

bool IsBootMessage(std::string_view message) { return message.substr(0, 14) == "Linux version "; }

std::string KmsgTime(uint64_t usec) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llu.%06llu s after boot", static_cast<unsigned long long>(usec / 1000000),
                static_cast<unsigned long long>(usec % 1000000));
  return buf;
}

void ScanKmsg(std::string_view data, XidLog& log) {
  bool first = true;
  ForEachLogLine(data, [&](std::string_view line) {
    if (line.empty() || line.front() == ' ') return;  // a continuation line (" SUBSYSTEM=pci")
    auto rec = ParseKmsgRecord(line);
    if (!rec) return;
    if (first) {
      first = false;
      log.from_boot = rec->seq == 0;
      if (!log.from_boot) log.oldest = KmsgTime(rec->usec);
    }
    if (auto ev = ParseXidMessage(rec->message)) {
      ev->time = KmsgTime(rec->usec);
      AddEvent(log, std::move(*ev));
    }
  });
}

void ScanKernLog(std::string_view data, XidLog& log) {
  bool first = true;
  ForEachLogLine(data, [&](std::string_view line) {
    auto k = ParseKernLogLine(line);
    if (!k) return;
    if (first) {
      first = false;
      log.oldest = CleanLogText(k->time, 40);
    }
    if (IsBootMessage(k->message)) {
      log.from_boot = true;
      log.oldest.clear();
      log.events.clear();
      log.dropped = 0;
      return;
    }
    if (auto ev = ParseXidMessage(k->message)) {
      ev->time = CleanLogText(k->time, 40);
      AddEvent(log, std::move(*ev));
    }
  });
}

}  // namespace gp::probe
