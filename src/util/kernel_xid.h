// The Xid line NVIDIA's driver writes to the kernel log, and the kernel's ring buffer record it comes in
// through /dev/kmsg ("PRIORITY,SEQ,USEC,FLAGS;MESSAGE", the kernel's Documentation/ABI/testing/dev-kmsg).
// The Xid line itself is "NVRM: Xid (PCI:DDDD:BB:DD): CODE, pid=PID, name=NAME, DETAIL" (older drivers: no
// "PCI:", no pid and name). Every field is checked; nothing in a line is trusted; each line is looked at up
// to kMaxKernelLogLine bytes. Pure functions, shared by doctor's Xid history (probe/xid.h) and watch's Xid
// events of a run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gp {

inline constexpr size_t kMaxKernelLogLine = 4096;  // bytes of a line looked at
inline constexpr size_t kMaxXidDetail = 160;       // bytes of a line's detail kept

// One Xid event's fields as the line gives them.
struct XidLine {
  int code = 0;
  std::string pci;      // "0000:18:00": the PCI domain:bus:device (the line has no function number)
  std::string pid;      // the process id the line names ("" when none or unknown)
  std::string process;  // the process name the line names ("" when none or unknown)
  std::string detail;   // the rest of the line, bounded, non-printable bytes replaced
};

// The Xid event in one kernel message (the text after any log prefix), or nullopt when it holds none or
// its PCI address or code is malformed.
std::optional<XidLine> ParseXidLine(std::string_view message);

// One /dev/kmsg record's header and message ("6,1234,5678901,-;NVRM: ..."); nullopt for a continuation
// line (" KEY=value") or a malformed header.
struct KmsgRecord {
  uint64_t seq = 0;
  uint64_t usec = 0;  // microseconds since boot
  std::string_view message;
};
std::optional<KmsgRecord> ParseKmsgRecord(std::string_view line);

// Calls fn(line) for each line of `data` (a trailing '\r' dropped), each cut to kMaxKernelLogLine bytes.
template <typename Fn>
void ForEachLogLine(std::string_view data, Fn fn) {
  size_t start = 0;
  while (start < data.size()) {
    size_t nl = data.find('\n', start);
    if (nl == std::string_view::npos) nl = data.size();
    std::string_view line = data.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line.substr(0, kMaxKernelLogLine));
    start = nl + 1;
  }
}

// Printable ASCII of `s` kept, anything else replaced by '?', at most `max` bytes, trailing blanks dropped.
std::string CleanLogText(std::string_view s, size_t max);

}  // namespace gp
