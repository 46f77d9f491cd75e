// The journal's export format and the Xid events in it (probe/xid.h). Format:
// https://systemd.io/JOURNAL_EXPORT_FORMATS/ ("Journal Export Format").
#include <cstdio>
#include <ctime>

#include "probe/xid.h"

namespace gp::probe {
namespace {

bool ValidFieldName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool ParseUsec(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

void Keep(JournalEntry& e, std::string_view name, std::string_view value) {
  if (name == "MESSAGE")
    e.message = value.substr(0, kMaxLogLine);
  else if (name == "__REALTIME_TIMESTAMP" && !ParseUsec(value, e.realtime_usec))
    e.realtime_usec = 0;
  else if (name == "__MONOTONIC_TIMESTAMP" && !ParseUsec(value, e.monotonic_usec))
    e.monotonic_usec = 0;
  else if (name == "_BOOT_ID")
    e.boot_id = value;
  else if (name == "_TRANSPORT")
    e.kernel = value == "kernel";
}

}  // namespace

// The entry's wall-clock time, else its time since boot.
std::string Time(const JournalEntry& e) {
  return e.realtime_usec ? JournalTime(e.realtime_usec) : KmsgTime(e.monotonic_usec);
}

std::string ForEachJournalEntry(std::string_view data, const std::function<void(const JournalEntry&)>& fn) {
  JournalEntry e;
  size_t fields = 0, pos = 0;
  auto flush = [&] {
    if (fields > 0) fn(e);
    e = JournalEntry{};
    fields = 0;
  };
  auto bad = [&](size_t at, const std::string& why) {
    return "journal export: byte " + std::to_string(at) + ": " + why;
  };
  while (pos < data.size()) {
    const size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) return bad(pos, "a field without its newline");
    const std::string_view line = data.substr(pos, nl - pos);
    if (line.empty()) {  // the end of an entry
      flush();
      pos = nl + 1;
      continue;
    }
    if (++fields > kMaxJournalFields)
      return bad(pos, "more than " + std::to_string(kMaxJournalFields) + " fields in an entry");
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      if (!ValidFieldName(line.substr(0, eq))) return bad(pos, "not a field name");
      Keep(e, line.substr(0, eq), line.substr(eq + 1));
      pos = nl + 1;
      continue;
    }
    // A binary field: NAME\n, 64-bit little-endian size, the bytes, \n.
    if (!ValidFieldName(line)) return bad(pos, "not a field name");
    const size_t at = nl + 1;
    if (data.size() - at < 8) return bad(at, "a binary field's size past the end");
    uint64_t size = 0;
    for (int i = 7; i >= 0; --i)
      size = (size << 8) | static_cast<unsigned char>(data[at + static_cast<size_t>(i)]);
    if (size > data.size() - at - 8) return bad(at, "a binary field's size past the end");
    const size_t end = at + 8 + static_cast<size_t>(size);
    if (end >= data.size() || data[end] != '\n') return bad(end, "no newline after a binary field");
    Keep(e, line, data.substr(at + 8, static_cast<size_t>(size)));
    pos = end + 1;
  }
  flush();
  return "";
}

std::string JournalTime(uint64_t realtime_usec) {
  const std::time_t t = static_cast<std::time_t>(realtime_usec / 1000000);
  std::tm tm{};
  if (!::gmtime_r(&t, &tm)) return "";
  char buf[40];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) return "";
  return buf;
}

void ScanJournalExport(std::string_view data, XidLog& log, bool across_boots) {
  bool first = true;
  std::string boot;
  const std::string error = ForEachJournalEntry(data, [&](const JournalEntry& e) {
    if (!e.kernel) return;
    const bool boot_changed = !first && !e.boot_id.empty() && e.boot_id != boot;
    const bool new_boot = !across_boots && boot_changed;
    // A window that holds a boot's start, or an earlier boot's entries, reaches back past this boot's start.
    if (across_boots && boot_changed) log.from_boot = true;
    if (!e.boot_id.empty()) boot = std::string(e.boot_id.substr(0, 64));
    if (first || new_boot) {
      first = false;
      log.from_boot = false;
      log.oldest = Time(e);
      log.events.clear();
      log.dropped = 0;
    }
    if (IsBootMessage(e.message) && across_boots) {
      log.from_boot = true;  // oldest stays: the window's first entry, before this boot
      return;
    }
    if (IsBootMessage(e.message)) {
      log.from_boot = true;
      log.oldest.clear();
      log.events.clear();
      log.dropped = 0;
      return;
    }
    if (auto ev = ParseXidMessage(e.message)) {
      ev->time = Time(e);
      AddEvent(log, std::move(*ev));
    }
  });
  if (!error.empty()) log.notes.push_back(error);
}

namespace {

bool Digits(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

bool ValidJournalSince(std::string_view s) {
  if (s == "today" || s == "yesterday") return true;
  if (!s.empty() && s[0] == '-') {
    size_t n = 1;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
    const std::string_view unit = s.substr(n);
    return n >= 2 && n <= 7 && (unit == "s" || unit == "min" || unit == "h" || unit == "d" || unit == "w");
  }
  // YYYY-MM-DD[ HH:MM[:SS]]
  if (s.size() < 10 || !Digits(s.substr(0, 4), 4) || s[4] != '-' || !Digits(s.substr(5, 2), 2) ||
      s[7] != '-' || !Digits(s.substr(8, 2), 2))
    return false;
  if (s.size() == 10) return true;
  if (s[10] != ' ' || (s.size() != 16 && s.size() != 19) || !Digits(s.substr(11, 2), 2) || s[13] != ':' ||
      !Digits(s.substr(14, 2), 2))
    return false;
  return s.size() == 16 || (s[16] == ':' && Digits(s.substr(17, 2), 2));
}

}  // namespace gp::probe
