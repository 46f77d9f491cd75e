// RealCommandRunner at its deadline: the whole process group ends, and a descendant that left the group
// while holding the output pipes does not keep the caller waiting.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include "support/ready_pipe.h"
#include "sys/process.h"
#include "util/strings.h"

using gp::sys::Command;
using gp::sys::RealCommandRunner;

namespace {
// Running (a zombie waiting for its new parent to reap it counts as ended).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Blocks until `pid` (not a child of ours) has ended, at most 10 s, on a pidfd: it becomes readable once
// the process has exited (a zombie counts as ended). True when it ended.
bool WaitGroupMemberEnded(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // already reaped
  const bool ended = gp::test::WaitReadable(fd, std::chrono::seconds(10));
  ::close(fd);
  return ended;
}
}  // namespace

TEST_CASE("RealCommandRunner: a grandchild in another session holding stdout ends the wait", "[sys]") {
  RealCommandRunner run;
  Command c;
  // The shell exits at once; setsid's sleep keeps stdout open in a session of its own for 30 s.
  c.argv = {"sh", "-c", "setsid sleep 30 & echo $!"};
  c.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  auto r = run.Run(c);
  const auto took = std::chrono::steady_clock::now() - start;
  const auto pid = gp::ParseUnsigned(gp::Trim(r.out));
  REQUIRE(pid);
  ::kill(static_cast<pid_t>(*pid), SIGKILL);  // what this test started, by its id
  CHECK(r.timed_out);
  CHECK(took < std::chrono::seconds(4));  // deadline + 2 s TERM grace + 0.5 s, not the 30 s sleep
}

TEST_CASE("RealCommandRunner: the process group is ended at the deadline even after the child exits",
          "[sys]") {
  RealCommandRunner run;
  Command c;
  // The child exits; its background sleep (same group) keeps the pipe open and ignores SIGTERM.
  c.argv = {"sh", "-c", "(trap '' TERM; exec sleep 30) & echo $!"};
  c.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  auto r = run.Run(c);
  const auto took = std::chrono::steady_clock::now() - start;
  const auto pid = gp::ParseUnsigned(gp::Trim(r.out));
  REQUIRE(pid);
  CHECK(r.timed_out);
  CHECK(took < std::chrono::seconds(4));
  // SIGKILL reached the group member; the kernel ends it a moment later (its parent has exited).
  CHECK(WaitGroupMemberEnded(static_cast<pid_t>(*pid)));
  CHECK_FALSE(Alive(static_cast<pid_t>(*pid)));
  if (Alive(static_cast<pid_t>(*pid))) ::kill(static_cast<pid_t>(*pid), SIGKILL);
}
