// The Xid history of a boot from the kernel log, in the two forms gpuprep reads it: the kernel's ring buffer
// as /dev/kmsg hands it out (the record and Xid line parsers are util/kernel_xid.h's) and the text logs
// rsyslog writes (/var/log/kern.log, /var/log/syslog: "Dec  4 15:38:01 HOST kernel: MESSAGE" or an RFC 3339
// time first), and the journal's export format. Every field is checked; nothing in a line is trusted; each
// line is looked at up to kMaxLogLine bytes. Pure functions: nothing here touches the system.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "probe/host.h"
#include "util/kernel_xid.h"

namespace gp::probe {

inline constexpr size_t kMaxLogLine = kMaxKernelLogLine;  // bytes of a line looked at
using gp::kMaxXidDetail;

// The Xid event in one kernel message (the text after any log prefix), or nullopt when it holds none or
// its PCI address or code is malformed (util/kernel_xid.h). `time` is left empty.
std::optional<XidEvent> ParseXidMessage(std::string_view message);

// One /dev/kmsg record's header and message (util/kernel_xid.h).
using gp::KmsgRecord;
using gp::ParseKmsgRecord;

// One kernel line of a text log: its time as written and the message after "kernel: " (and after a
// "[  123.456789] " uptime stamp); nullopt for a line of another program or a malformed one.
struct KernLogLine {
  std::string_view time;
  std::string_view message;
};
std::optional<KernLogLine> ParseKernLogLine(std::string_view line);

// Whether a kernel message is the first the kernel writes at boot ("Linux version ...").
bool IsBootMessage(std::string_view message);

// "1234.567890 s after boot".
std::string KmsgTime(uint64_t usec);

// Adds the Xid events of `data`, records as /dev/kmsg hands them out (one per line, continuation lines
// ignored), to `log`; sets from_boot when the first record is the boot's first (sequence 0), else oldest.
void ScanKmsg(std::string_view data, XidLog& log);
// Adds the Xid events of a text log's contents (oldest file first, concatenated) to `log`: each boot
// message starts the history again (only the last boot's events are kept) and sets from_boot; without one,
// oldest is the time of the first kernel line.
void ScanKernLog(std::string_view data, XidLog& log);

// Adds `ev` to `log`, or counts it in `dropped` past kMaxXidEvents.
void AddEvent(XidLog& log, XidEvent ev);

// One entry of the journal's export format (`journalctl -o export`; systemd's "Journal Export Formats":
// entries separated by an empty line; a field is "NAME=value\n", or, when the value holds a newline or is
// binary, "NAME\n", its size as a 64-bit little-endian integer, the bytes and "\n"). Only what the Xid
// history needs is kept.
struct JournalEntry {
  uint64_t realtime_usec = 0;   // __REALTIME_TIMESTAMP: microseconds since the epoch
  uint64_t monotonic_usec = 0;  // __MONOTONIC_TIMESTAMP: microseconds since this entry's boot
  std::string_view boot_id;     // _BOOT_ID
  std::string_view message;     // MESSAGE (at most kMaxLogLine bytes looked at)
  bool kernel = false;          // _TRANSPORT=kernel: the kernel's own log
};

// Calls fn(entry) for each entry of `data`, in order. Returns "" or, for data that breaks the format (a
// field name that is not [A-Z0-9_], a binary size past the end, no newline after its bytes), one line naming
// the byte offset; the entries before it have been passed on. An entry is at most kMaxJournalFields fields.
std::string ForEachJournalEntry(std::string_view data, const std::function<void(const JournalEntry&)>& fn);
inline constexpr size_t kMaxJournalFields = 1024;

// "2024-07-01 06:12:40 UTC" for microseconds since the epoch.
std::string JournalTime(uint64_t realtime_usec);

// Adds the Xid events of the kernel's entries in `data` (an export of `journalctl -k -b`) to `log`: the last
// boot's only (a boot message or a new _BOOT_ID starts the history again); from_boot when its first entry
// is the boot's own ("Linux version ..."), else oldest is the time of the first kernel entry. Malformed
// data ends the scan with a note.
// With `across_boots` (doctor --since: a window, not a boot), every boot's events are kept and oldest is the
// first kernel entry's time; from_boot when the window reaches this boot's start (a boot message, or entries
// of more than one boot).
void ScanJournalExport(std::string_view data, XidLog& log, bool across_boots = false);

// Whether `since` is a time doctor passes to `journalctl --since=`: a date ("2024-12-02"), a date and time
// ("2024-12-02 11:00", "2024-12-02 11:00:00"), "today", "yesterday", or a span back from now ("-6h": "-", 1
// to 6 digits, then s, min, h, d or w; systemd.time(7)).
bool ValidJournalSince(std::string_view since);

}  // namespace gp::probe
