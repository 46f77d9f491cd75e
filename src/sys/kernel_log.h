// Bounded reads of the kernel log: the ring buffer through /dev/kmsg, and the tail of a text log.
#pragma once
#include <cstddef>
#include <string>

namespace gp::sys {

struct LogRead {
  bool ok = false;
  std::string data;        // the records or the text read
  bool truncated = false;  // a bound was reached: what is missing is the oldest part (text logs) or the
                           // newest records (kmsg, after max_bytes or the deadline)
  std::string error;       // one line when !ok: "cannot read /dev/kmsg: Operation not permitted"
};

// Reads every record the kernel's ring buffer holds now through `path` (/dev/kmsg: one record per read(2)),
// opened non-blocking, from its oldest record: stops at the end of the buffer (EAGAIN), after `max_bytes`,
// or after `max_ms` milliseconds; records overwritten while reading (EPIPE) are skipped. A regular file at
// `path` is read whole within the same bounds (tests hand recorded records in).
LogRead ReadKmsg(const std::string& path, size_t max_bytes, int max_ms);

// The last `max_bytes` of the regular file `host_path` (a path on this machine), starting at a line: a cut
// first line is dropped and `truncated` set.
LogRead ReadTail(const std::string& host_path, size_t max_bytes);

// Follows the kernel's ring buffer from now on (watch: the Xid events of a run). Open positions `path` at
// its end: /dev/kmsg by lseek(SEEK_END), which the kernel documents as "seek after the last record"; a
// regular file (tests append recorded records to it) at its size. ReadNew hands out what was written
// since, non-blocking.
class KmsgFollower {
 public:
  KmsgFollower() = default;
  ~KmsgFollower();
  KmsgFollower(const KmsgFollower&) = delete;
  KmsgFollower& operator=(const KmsgFollower&) = delete;

  // "" or one line saying why the log cannot be followed ("cannot read /dev/kmsg: Operation not permitted").
  std::string Open(const std::string& path);
  bool IsOpen() const { return fd_ >= 0; }
  // The records written since the last call (one per line), at most `max_bytes`; what is left waits for
  // the next call. Records the kernel overwrote before they were read (EPIPE) are counted in `lost`.
  LogRead ReadNew(size_t max_bytes);
  unsigned long lost() const { return lost_; }

 private:
  int fd_ = -1;
  bool regular_ = false;
  std::string path_;
  std::string pending_;  // a regular file: the start of a line whose end was not written yet
  unsigned long lost_ = 0;
};

}  // namespace gp::sys
