// RealCommandRunner with real programs: capture, exit codes, environment, stdin, timeouts, not found.
#include "sys/process.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "sys/host_info.h"

using gp::sys::Command;
using gp::sys::RealCommandRunner;

TEST_CASE("RealCommandRunner captures stdout, stderr and the exit code, with no shell", "[sys]") {
  RealCommandRunner run;
  Command c;
  c.argv = {"sh", "-c", "echo out; echo err >&2; exit 7"};
  auto r = run.Run(c);
  CHECK(r.exit_code == 7);
  CHECK(r.out == "out\n");
  CHECK(r.err == "err\n");
  CHECK_FALSE(r.ok());

  c.argv = {"printf", "%s|", "a b", "$HOME", "'q'"};  // each word arrives as one argument, unexpanded
  r = run.Run(c);
  CHECK(r.ok());
  CHECK(r.out == "a b|$HOME|'q'|");
}

TEST_CASE("RealCommandRunner passes env additions and stdin", "[sys]") {
  RealCommandRunner run;
  Command c;
  c.argv = {"sh", "-c", "printf '%s' \"$GP_TEST_VAR\"; cat"};
  c.env = {{"GP_TEST_VAR", "x=y"}};
  c.stdin_data = "from stdin";
  auto r = run.Run(c);
  CHECK(r.ok());
  CHECK(r.out == "x=yfrom stdin");
}

TEST_CASE("RealCommandRunner gives children the environment it was made with, not the process's later one",
          "[sys]") {
  ::setenv("GP_TEST_EARLY", "early", 1);
  auto captured = gp::sys::CaptureEnvironment();
  CHECK(captured.at("GP_TEST_EARLY") == "early");
  captured["GP_TEST_BASE"] = "base";
  captured["GP_TEST_OVER"] = "from base";
  RealCommandRunner run(captured);
  ::setenv("GP_TEST_LATE", "late", 1);  // set after the capture: no child sees it
  ::setenv("GP_TEST_EARLY", "changed", 1);
  Command c;
  c.argv = {"sh", "-c",
            "printf '%s|%s|%s|%s' \"$GP_TEST_EARLY\" \"$GP_TEST_BASE\" \"$GP_TEST_OVER\" "
            "\"${GP_TEST_LATE-unset}\""};
  c.env = {{"GP_TEST_OVER", "from command"}};
  auto r = run.Run(c);
  ::unsetenv("GP_TEST_LATE");
  ::unsetenv("GP_TEST_EARLY");
  CHECK(r.ok());
  CHECK(r.out == "early|base|from command|unset");
}

TEST_CASE("RealCommandRunner kills a command at its timeout, children included", "[sys]") {
  RealCommandRunner run;
  Command c;
  c.argv = {"sh", "-c", "sleep 30 & sleep 30"};
  c.timeout = std::chrono::milliseconds(200);
  auto start = std::chrono::steady_clock::now();
  auto r = run.Run(c);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok());
  CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("RealCommandRunner: a missing program is not_found, and status lines are delivered", "[sys]") {
  RealCommandRunner run;
  Command c;
  c.argv = {"gpuprep-no-such-program"};
  auto r = run.Run(c);
  CHECK(r.not_found);
  CHECK(r.exit_code == 127);

  std::vector<std::string> lines;
  c.argv = {"sh", "-c", "printf 'pmstatus:a:10:x\\npmstatus:b:20:y\\n' >&3; echo done"};
  c.status_fd = 3;
  c.on_status_line = [&lines](const std::string& l) { lines.push_back(l); };
  r = run.Run(c);
  CHECK(r.ok());
  CHECK(r.out == "done\n");
  CHECK(lines == std::vector<std::string>{"pmstatus:a:10:x", "pmstatus:b:20:y"});
}

TEST_CASE("RealCommandRunner ends a command whose output passes the capture limit", "[sys]") {
  RealCommandRunner run;
  Command c;
  c.argv = {"yes"};  // a stand-in that floods its stdout
  c.timeout = std::chrono::seconds(3);
  const auto start = std::chrono::steady_clock::now();
  auto r = run.Run(c);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.ok());
  CHECK(r.out.size() <= (16u << 20));
  CHECK(r.err.find("output larger than 16 MiB") != std::string::npos);
  c.argv = {"sh", "-c", "yes >&2"};  // and its stderr
  r = run.Run(c);
  CHECK_FALSE(r.timed_out);
  CHECK(r.err.size() <= (16u << 20) + 100);
}

TEST_CASE("ShellQuote quotes only what a POSIX shell would change", "[sys]") {
  CHECK(gp::sys::ShellQuote("apt-get") == "apt-get");
  CHECK(gp::sys::ShellQuote("") == "''");
  CHECK(gp::sys::ShellQuote("a b") == "'a b'");
  CHECK(gp::sys::ShellQuote("it's") == "'it'\\''s'");
  CHECK(gp::sys::ShellJoin({"echo", "$HOME", "x=1"}) == "echo '$HOME' x=1");
}

TEST_CASE("ShellJoin quotes a first word a shell would read as syntax", "[sys]") {
  using gp::sys::ShellJoin;
  CHECK(ShellJoin({"if", "a"}) == "'if' a");
  CHECK(ShellJoin({"time", "x"}) == "'time' x");
  CHECK(ShellJoin({"coproc"}) == "'coproc'");
  CHECK(ShellJoin({"!"}) == "'!'");
  CHECK(ShellJoin({"x=1", "y=2"}) == "'x=1' y=2");
  CHECK(ShellJoin({"x+=1"}) == "'x+=1'");
  CHECK(ShellJoin({"_a1=b"}) == "'_a1=b'");
  CHECK(ShellJoin({"1x=2"}) == "1x=2");  // not a variable name: a command
  CHECK(ShellJoin({"+=1"}) == "+=1");
  CHECK(ShellJoin({"docker", "if", "x+=1"}) ==
        "docker if x+=1");  // only the first word is in command position
}
