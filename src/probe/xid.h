// The Xid lines NVIDIA's driver writes to the kernel log, and the two forms gpuprep reads them in: the
// kernel's ring buffer as /dev/kmsg hands it out ("PRIORITY,SEQ,USEC,FLAGS;MESSAGE", the kernel's
// Documentation/ABI/testing/dev-kmsg) and the text logs rsyslog writes (/var/log/kern.log, /var/log/syslog:
// "Dec  4 15:38:01 HOST kernel: MESSAGE" or an RFC 3339 time first). The Xid line itself is
// "NVRM: Xid (PCI:DDDD:BB:DD): CODE, pid=PID, name=NAME, DETAIL" (older drivers: no "PCI:", no pid and
// name). Every field is checked; nothing in a line is trusted; each line is looked at up to kMaxLogLine
// bytes. Pure functions: nothing here touches the system.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "probe/host.h"

namespace gp::probe {

inline constexpr size_t kMaxLogLine = 4096;   // bytes of a line looked at
inline constexpr size_t kMaxXidDetail = 160;  // bytes of a line's detail kept

// The Xid event in one kernel message (the text after any log prefix), or nullopt when it holds none or
// its PCI address or code is malformed. `time` is left empty.
std::optional<XidEvent> ParseXidMessage(std::string_view message);

// One /dev/kmsg record's header and message ("6,1234,5678901,-;NVRM: ..."); nullopt for a continuation
// line (" KEY=value") or a malformed header.
struct KmsgRecord {
  uint64_t seq = 0;
  uint64_t usec = 0;  // microseconds since boot
  std::string_view message;
};
std::optional<KmsgRecord> ParseKmsgRecord(std::string_view line);

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

}  // namespace gp::probe
