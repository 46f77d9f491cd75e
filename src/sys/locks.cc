#include "sys/locks.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/strings.h"

namespace gp::sys {

ApplyLock::~ApplyLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

std::unique_ptr<ApplyLock> ApplyLock::TryAcquire(sys::Fs& fs, std::string& why) {
  fs.MakeDirs("/var/lib/gpuprep", 0755);
  const std::string path = fs.HostPath(kLockPath);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(Trim(std::string(buf, static_cast<size_t>(n)))) : "";
    why = pid.empty() ? "held by another process" : "held by pid " + pid;
    ::close(fd);
    return nullptr;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    ssize_t ignored = ::pwrite(fd, pid.data(), pid.size(), 0);
    (void)ignored;
  }
  return std::unique_ptr<ApplyLock>(new ApplyLock(fd));
}

std::optional<std::string> AptLockHolder(const sys::Fs& fs) {
  for (const char* lock : {"/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock"}) {
    const std::string path = fs.HostPath(lock);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct flock fl;
    std::memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    int rc = ::fcntl(fd, F_GETLK, &fl);
    ::close(fd);
    if (rc != 0 || fl.l_type == F_UNLCK) continue;
    std::string comm = "another process";
    if (auto c = fs.ReadPrefix("/proc/" + std::to_string(fl.l_pid) + "/comm", 64))
      comm = std::string(Trim(*c));
    return comm + " (pid " + std::to_string(fl.l_pid) + ")";
  }
  return std::nullopt;
}

}  // namespace gp::sys
