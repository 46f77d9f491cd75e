// Waiting for another process without polling: WaitReadable blocks on a file descriptor (a pipe, a pidfd)
// until it is readable or a timeout passes, and ReadyPipe is the pipe a child process writes a line to once
// it is ready (a server: after listen(), its port), which the test blocks on. The child's exit closes its
// end, so a child that dies before it is ready ends the wait at once instead of at the timeout.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>

namespace gp::test {

// How long a test waits for a helper process to become ready: generous, for a loaded machine.
inline constexpr std::chrono::milliseconds kReadyTimeout{30000};

// Blocks until `fd` is readable (data, end of file, or a pidfd's process ended) or `timeout` passes.
// Returns false at the timeout.
inline bool WaitReadable(int fd, std::chrono::milliseconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw std::runtime_error("poll failed on fd " + std::to_string(fd));
  }
}

// A pipe whose write end a child inherits (its number goes on the child's command line) and whose read end
// the test waits on. Both ends are close-on-exec, so no other child holds the write end; the child that
// should keep it calls InheritWriteEnd() between fork() and exec().
class ReadyPipe {
 public:
  ReadyPipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    read_ = fds[0];
    write_ = fds[1];
  }
  ~ReadyPipe() {
    if (read_ >= 0) ::close(read_);
    if (write_ >= 0) ::close(write_);
  }
  ReadyPipe(const ReadyPipe&) = delete;
  ReadyPipe& operator=(const ReadyPipe&) = delete;

  // The write end's number, for the child's command line.
  int write_fd() const { return write_; }
  // In the child after fork(): keeps the write end open across exec().
  void InheritWriteEnd() const { ::fcntl(write_, F_SETFD, 0); }
  // In the parent after fork(): drops its copy of the write end, so the child's exit reads as end of file.
  void CloseWriteEnd() {
    if (write_ >= 0) ::close(write_);
    write_ = -1;
  }

  // The next line the child writes (without its newline), waiting up to `timeout`. Throws, naming `who`,
  // when the timeout passes or the child closes the pipe (exits) first.
  std::string WaitLine(const std::string& who, std::chrono::milliseconds timeout = kReadyTimeout) {
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    std::string line;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
      if (!WaitReadable(read_, left))
        throw std::runtime_error(who + " was not ready within " + std::to_string(timeout.count() / 1000) +
                                 " s");
      char c = 0;
      const ssize_t n = ::read(read_, &c, 1);  // one byte at a time: a later line stays in the pipe
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw std::runtime_error(who + " exited (or closed its readiness pipe) before it was ready");
      if (c == '\n') return line;
      line += c;
    }
  }

 private:
  int read_ = -1, write_ = -1;
};

}  // namespace gp::test
