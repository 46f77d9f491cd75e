// File locks (flock and fcntl: system calls, so they live in sys/): gpuprep's own, so two applies never
// race, and a look at apt's (who holds it, for the wait message).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "sys/fs.h"

namespace gp::sys {

inline constexpr const char* kLockPath = "/var/lib/gpuprep/apply.lock";

// flock(LOCK_EX|LOCK_NB) on /var/lib/gpuprep/apply.lock, which then holds our pid. Released on destruction
// (and by the kernel when the process dies, even by SIGKILL).
class ApplyLock {
 public:
  ~ApplyLock();
  ApplyLock(const ApplyLock&) = delete;
  ApplyLock& operator=(const ApplyLock&) = delete;
  // nullptr when another process holds it; `why` then says "held by pid N" (or the open error).
  static std::unique_ptr<ApplyLock> TryAcquire(sys::Fs& fs, std::string& why);

 private:
  explicit ApplyLock(int fd) : fd_(fd) {}
  int fd_;
};

// "unattended-upgr (pid 812)" when another process holds dpkg's frontend lock (an fcntl lock, as apt and
// dpkg take it), else nullopt.
std::optional<std::string> AptLockHolder(const sys::Fs& fs);

}  // namespace gp::sys
