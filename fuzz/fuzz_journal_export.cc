// The journal's export format (`journalctl -k -o export`, read by doctor --since and --health): any bytes
// through the entry reader and the Xid scan of both readings (this boot; every boot since a time). It must
// not crash; every view it hands out lies inside the input, a message is at most kMaxLogLine bytes, an error
// names a byte offset inside the input, and what the scan keeps (times, addresses, processes, details, notes)
// is safe to print on a terminal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probe/host.h"
#include "probe/xid.h"
#include "util/input.h"

namespace {

void Safe(std::string_view s) {
  if (gp::ControlCharAt(s) || gp::InvalidUtf8At(s) || gp::BidiControlAt(s)) std::abort();
}

void Inside(std::string_view part, std::string_view whole) {
  if (part.empty()) return;
  if (part.data() < whole.data() || part.data() + part.size() > whole.data() + whole.size()) std::abort();
}

void Scan(std::string_view data, bool across_boots) {
  gp::probe::XidLog log;
  gp::probe::ScanJournalExport(data, log, across_boots);
  if (log.events.size() > gp::probe::kMaxXidEvents) std::abort();
  // This boot's history from its start has no oldest time; a --since window that reaches past it keeps its
  // own.
  if (!across_boots && log.from_boot && !log.oldest.empty()) std::abort();
  Safe(log.oldest);
  for (const auto& e : log.events) {
    if (e.code <= 0) std::abort();
    Safe(e.pci);
    Safe(e.time);
    Safe(e.pid);
    Safe(e.process);
    Safe(e.detail);
    if (e.detail.size() > gp::probe::kMaxXidDetail + 8) std::abort();
  }
  for (const auto& n : log.notes) Safe(n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view data(reinterpret_cast<const char*>(bytes), size);
  size_t entries = 0;
  const std::string error = gp::probe::ForEachJournalEntry(data, [&](const gp::probe::JournalEntry& e) {
    ++entries;
    Inside(e.message, data);
    Inside(e.boot_id, data);
    if (e.message.size() > gp::probe::kMaxLogLine) std::abort();
  });
  if (!error.empty()) {
    const std::string_view prefix = "journal export: byte ";
    if (error.rfind(prefix, 0) != 0) std::abort();
    const size_t at = std::strtoull(error.c_str() + prefix.size(), nullptr, 10);
    if (at > size) std::abort();
  }
  if (entries > size) std::abort();  // an entry takes at least one field line
  Scan(data, false);
  Scan(data, true);
  return 0;
}
