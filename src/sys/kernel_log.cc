#include "sys/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace gp::sys {
namespace {

struct LogFd {
  int fd;
  ~LogFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

LogRead ReadKmsg(const std::string& path, size_t max_bytes, int max_ms) {
  LogRead r;
  LogFd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) {
    r.error = "cannot read " + path + ": " + std::strerror(errno);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  std::vector<char> buf(16384);  // a record is at most about 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX)
  for (;;) {
    if (r.data.size() >= max_bytes || std::chrono::steady_clock::now() >= deadline) {
      r.truncated = true;
      break;
    }
    const ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n > 0) {
      r.data.append(buf.data(), static_cast<size_t>(n));
      if (r.data.back() != '\n') r.data += '\n';
      continue;
    }
    if (n == 0 || errno == EAGAIN) break;  // end of the file, or of the ring buffer
    if (errno == EINTR || errno == EPIPE) continue;
    r.error = "cannot read " + path + ": " + std::strerror(errno);
    return r;
  }
  if (r.data.size() > max_bytes) r.data.resize(max_bytes);
  r.ok = true;
  return r;
}

LogRead ReadTail(const std::string& host_path, size_t max_bytes) {
  LogRead r;
  LogFd f{::open(host_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  struct stat st {};
  if (f.fd < 0 || ::fstat(f.fd, &st) != 0) {
    r.error = "cannot read " + host_path + ": " + std::strerror(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = "cannot read " + host_path + ": not a regular file";
    return r;
  }
  const off_t size = st.st_size;
  const off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  r.truncated = start > 0;
  r.data.resize(static_cast<size_t>(size - start));
  size_t got = 0;
  while (got < r.data.size()) {
    const ssize_t n = ::pread(f.fd, &r.data[got], r.data.size() - got, start + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.error = "cannot read " + host_path + ": " + std::strerror(errno);
      r.data.clear();
      return r;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  r.data.resize(got);
  if (r.truncated) {
    const size_t nl = r.data.find('\n');
    r.data.erase(0, nl == std::string::npos ? r.data.size() : nl + 1);
  }
  r.ok = true;
  return r;
}

KmsgFollower::~KmsgFollower() {
  if (fd_ >= 0) ::close(fd_);
}

std::string KmsgFollower::Open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) return "cannot read " + path + ": " + std::strerror(errno);
  regular_ = S_ISREG(st.st_mode);
  if (!regular_ && !S_ISCHR(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    return "cannot read " + path + ": not the kernel log device or a regular file";
  }
  if (::lseek(fd_, 0, SEEK_END) < 0) {
    std::string e = "cannot read " + path + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return e;
  }
  return "";
}

LogRead KmsgFollower::ReadNew(size_t max_bytes) {
  LogRead r;
  if (fd_ < 0) {
    r.error = "the kernel log is not open";
    return r;
  }
  std::vector<char> buf(16384);  // a record is at most about 8 KiB (the kernel's CONSOLE_EXT_LOG_MAX)
  // A regular file is read in blocks: a line cut at a block's end waits for its rest. /dev/kmsg hands out
  // one whole record per read.
  auto whole_lines = [&] {
    if (!regular_) return;
    r.data.insert(0, pending_);
    const size_t nl = r.data.rfind('\n');
    pending_ = r.data.substr(nl == std::string::npos ? 0 : nl + 1);
    r.data.resize(nl == std::string::npos ? 0 : nl + 1);
    if (pending_.size() > 16384) pending_.clear();  // no line is that long: drop it
  };
  while (r.data.size() < max_bytes) {
    const ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n > 0) {
      r.data.append(buf.data(), static_cast<size_t>(n));
      if (!regular_ && r.data.back() != '\n') r.data += '\n';
      continue;
    }
    if (n == 0 || errno == EAGAIN) {  // nothing newer (a regular file: its end)
      whole_lines();
      r.ok = true;
      return r;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE) {  // overwritten before it was read; the next read goes on from the oldest kept
      ++lost_;
      continue;
    }
    r.error = "cannot read " + path_ + ": " + std::strerror(errno);
    return r;
  }
  whole_lines();
  r.truncated = true;
  r.ok = true;
  return r;
}

}  // namespace gp::sys
