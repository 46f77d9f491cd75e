#include "sys/stop_signal.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>

namespace gp::sys {
namespace {

// The handler may only do async-signal-safe things: store the signal and write one byte to a pipe
// (signal-safety(7) lists write(2)).
std::atomic<int> g_signal{0};
int g_pipe[2] = {-1, -1};
struct sigaction g_old_int, g_old_term;

void OnSignal(int sig) {
  g_signal.store(sig);
  if (g_pipe[1] >= 0) {
    const int saved = errno;
    const char byte = 1;
    ssize_t ignored = ::write(g_pipe[1], &byte, 1);
    (void)ignored;
    errno = saved;
  }
}

}  // namespace

StopSignal::StopSignal() {
  g_signal.store(0);
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;  // a second Ctrl-C ends the process the usual way
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignal::~StopSignal() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  for (int& fd : g_pipe) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

bool StopSignal::Stopped() const { return g_signal.load() != 0; }

bool StopSignal::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  while (!Stopped()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (g_pipe[0] < 0) {  // no pipe: sleep in short slices
      ::usleep(static_cast<useconds_t>(std::min<long long>(left.count(), 50) * 1000));
      continue;
    }
    struct pollfd p {
      g_pipe[0], POLLIN, 0
    };
    const int ms = static_cast<int>(std::min<long long>(left.count() + 1, 60000));
    if (::poll(&p, 1, ms) > 0) {
      char buf[16];
      while (::read(g_pipe[0], buf, sizeof buf) > 0) {
      }
    }
  }
  return true;
}

}  // namespace gp::sys
