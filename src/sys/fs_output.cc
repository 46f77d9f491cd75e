// The one writer of a path a user names for output (fs.h, Fs::WriteOutput): what the path is decides how it
// is written, so a device, a FIFO or a descriptor is never replaced by a regular file.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "sys/fs.h"

namespace gp::sys {
namespace {

bool OutputDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether the resolved `path` is an entry of a process's descriptor directory: /proc/PID/fd/N or
// /proc/PID/task/TID/fd/N.
bool DescriptorEntry(const std::string& path) {
  std::vector<std::string> d;
  for (size_t start = 1; start <= path.size();) {
    const size_t slash = std::min(path.find('/', start), path.size());
    d.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  if (d.size() < 4 || d[0] != "proc" || !OutputDigits(d[1]) || !OutputDigits(d.back()) ||
      d[d.size() - 2] != "fd")
    return false;
  return d.size() == 4 || (d.size() == 6 && d[2] == "task" && OutputDigits(d[3]));
}

// Whether `path`, its links followed as the kernel follows them, names an entry of a process's descriptor
// directory (/proc/self/fd/1, /dev/stdout, /dev/fd/3): a link the kernel opens as the descriptor's own
// file, which has no name of its own to replace. The walk stops there: that link is not followed.
bool ThroughDescriptor(const Fs& fs, const std::string& path) {
  return ResolvePath(fs, path, DescriptorEntry).stopped;
}

// write(2) of all of `data`. A FIFO whose reader has gone raises SIGPIPE, which would end gpuprep: it is
// held back for the write (and taken if the write raised it), so the write fails with EPIPE instead.
bool WriteAllNoSigpipe(int fd, const std::string& data) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  bool ok = true;
  for (size_t off = 0; off < data.size();) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ok = false;
      break;
    }
    off += static_cast<size_t>(n);
  }
  const int saved = errno;
  if (!ok && saved == EPIPE) {
    const struct timespec none {};
    sigtimedwait(&pipe_only, nullptr, &none);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return ok;
}

std::string OutputErrno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Opens the node at `host` (the path as named: `shown`) and writes `contents` to it, where it is.
WriteResult WriteInPlace(const std::string& host, const std::string& shown, const std::string& contents,
                         OutputKind kind, bool wait_for_reader) {
  const int fd = ::open(host.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (wait_for_reader ? 0 : O_NONBLOCK));
  if (fd < 0) {
    if (errno == ENXIO) return {false, shown + ": no process has this FIFO open for reading", ""};
    return {false, OutputErrno("cannot open", shown), ""};
  }
  struct stat st {};
  const bool same = ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
                                              (S_ISREG(st.st_mode) && kind == OutputKind::kDescriptor));
  // The blocking writes a reader paces; a descriptor's regular file is appended to, as a shell's ">>" would.
  const int flags = ::fcntl(fd, F_GETFL);
  if (!same || flags < 0 ||
      ::fcntl(fd, F_SETFL, (flags & ~O_NONBLOCK) | (S_ISREG(st.st_mode) ? O_APPEND : 0)) != 0) {
    ::close(fd);
    return {false, shown + ": changed while it was being opened; nothing written", ""};
  }
  if (!WriteAllNoSigpipe(fd, contents)) {
    WriteResult r{false, OutputErrno("cannot write", shown), ""};
    ::close(fd);
    return r;
  }
  if (::close(fd) != 0 && errno != EINTR) return {false, OutputErrno("cannot write", shown), ""};
  return {};
}

}  // namespace

OutputTarget DiskFs::OutputTargetOf(const std::string& path) const {
  const bool descriptor = ThroughDescriptor(*this, path);
  struct stat st {};
  if (::stat(Real(path).c_str(), &st) != 0) {
    // Nothing there yet: a new file (WriteAtomic says why when it cannot make one). A descriptor that is
    // not open has nothing to write to.
    if (!descriptor) return {OutputKind::kFile, ""};
    return {OutputKind::kRefused, OutputErrno("cannot write", path)};
  }
  const std::string use = "; name a regular file (replaced whole), a FIFO or a character device";
  if (S_ISDIR(st.st_mode)) return {OutputKind::kRefused, path + " is a directory" + use};
  if (S_ISSOCK(st.st_mode)) return {OutputKind::kRefused, path + " is a socket" + use};
  if (S_ISBLK(st.st_mode)) return {OutputKind::kRefused, path + " is a block device" + use};
  if (descriptor) return {OutputKind::kDescriptor, ""};
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return {OutputKind::kNode, ""};
  if (S_ISREG(st.st_mode)) return {OutputKind::kFile, ""};
  return {OutputKind::kRefused, path + " is not a regular file" + use};
}

WriteResult DiskFs::WriteOutput(const std::string& path, const std::string& contents, unsigned mode,
                                bool wait_for_reader) {
  const OutputTarget t = OutputTargetOf(path);
  switch (t.kind) {
    case OutputKind::kRefused:
      return {false, t.why, ""};
    case OutputKind::kFile:
      return WriteAtomic(path, contents, mode, /*keep_backup=*/false);
    case OutputKind::kNode:
    case OutputKind::kDescriptor:
      break;
  }
  return WriteInPlace(Real(path), path, contents, t.kind, wait_for_reader);
}

}  // namespace gp::sys
