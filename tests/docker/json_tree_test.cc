// daemon.json in bounded time and memory: the size and depth limits refuse before parsing (path:line:col,
// exit 2), the tree reads duplicates and writes text exactly as nlohmann's ordered_json does, without its
// recursion or its quadratic key look-up, LineDiff is linear, and the largest file gpuprep edits is edited
// within a measured memory and time (a child process's peak RSS from wait4's rusage).
#include "docker/json_tree.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "docker/daemon_json.h"
#include "util/error.h"

using namespace gp;
using docker::EditDaemonJson;
using nlohmann::ordered_json;

namespace {

std::string ErrorOf(const std::string& text) {
  try {
    EditDaemonJson(text, {}, "/srv/root/etc/docker/daemon.json");
  } catch (const Error& e) {
    CHECK(e.code() == kExitUsage);
    return e.what();
  }
  return "";
}

std::string Nested(int levels, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(levels), '[') + inner +
         std::string(static_cast<size_t>(levels), ']');
}

// `{"k0": 0, "k1": 1, ...}` of about `bytes` bytes.
std::string FlatKeys(size_t bytes) {
  std::string s = "{";
  for (int i = 0; s.size() + 24 < bytes; ++i)
    s += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  return s + "\"last\": true}";
}

struct Measured {
  long peak_kb = 0;      // the child's peak RSS (wait4's ru_maxrss)
  long baseline_kb = 0;  // its RSS when it started the work (inherited from this process)
  double seconds = 0;    // the work's CPU time
  int status = -1;       // 0: the edit succeeded, 2: refused with exit 2, else failed
};

// Runs EditDaemonJson(text) in a child and measures it.
Measured InChild(const std::string& text) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    struct rusage ru {};
    ::getrusage(RUSAGE_SELF, &ru);
    const long base = ru.ru_maxrss;
    // CPU time, not wall time: the bound is on the work done, which a loaded machine does not change.
    const auto cpu_seconds = [] {
      timespec ts{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
    };
    const double t0 = cpu_seconds();
    int code = 0;
    try {
      docker::DaemonJsonWant want;
      want.default_runtime = true;
      want.cdi = true;
      auto e = EditDaemonJson(text, want, "/etc/docker/daemon.json");
      code = e.changed && !e.diff.empty() ? 0 : 1;
    } catch (const Error& e) {
      code = e.code() == kExitUsage ? 2 : 1;
    } catch (...) {
      code = 1;
    }
    const double s = cpu_seconds() - t0;
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%ld %.6f", base, s);
    if (::write(fds[1], buf, static_cast<size_t>(n)) != n) code = 1;
    ::_exit(code);
  }
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  REQUIRE(::wait4(pid, &status, 0, &ru) == pid);
  Measured m;
  if (n > 0) std::sscanf(buf, "%ld %lf", &m.baseline_kb, &m.seconds);
  m.peak_kb = ru.ru_maxrss;
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return m;
}

}  // namespace

TEST_CASE("daemon.json: nesting deeper than 32 levels is refused where it starts", "[docker][daemon_json]") {
  CHECK(ErrorOf("{\"a\": " + Nested(31) + "}").empty());  // 32 levels: edited
  CHECK(ErrorOf("{\"a\": " + Nested(32) + "}") ==
        "/srv/root/etc/docker/daemon.json:1:38: nested deeper than 32 levels; gpuprep leaves the file as it "
        "is: "
        "correct it by hand");
  // what crashed the recursive writer (200 KB) and took 22.6 GB (100 KB): refused before parsing
  CHECK(ErrorOf("{\"a\": " + Nested(100000) + "}")
            .rfind("/srv/root/etc/docker/daemon.json:1:38: nested deeper", 0) == 0);
  CHECK(ErrorOf("{\"a\":\n" + std::string(50000, '{') + "\"x\":1") ==
        "/srv/root/etc/docker/daemon.json:2:32: nested deeper than 32 levels; gpuprep leaves the file as it "
        "is: "
        "correct it by hand");
}

TEST_CASE("daemon.json: a file over 1 MiB is refused before it is parsed", "[docker][daemon_json]") {
  const std::string big = FlatKeys(5000000);
  CHECK(ErrorOf(big) ==
        "/srv/root/etc/docker/daemon.json:1:1048577: the file is " + std::to_string(big.size()) +
            " bytes, more than the 1048576 (1 MiB) gpuprep edits; gpuprep leaves the file as it is: "
            "shorten it by hand");
  std::string lines(2000000, '\n');  // blank: still counted, still refused, at its line
  CHECK(ErrorOf(lines).rfind("/srv/root/etc/docker/daemon.json:1048577:1: the file is 2000000 bytes", 0) ==
        0);
  // at the limit: read, but indented it would pass it, so refused too (gpuprep reads again what it writes)
  const std::string at_limit = FlatKeys(docker::kMaxDaemonJsonBytes);
  REQUIRE(at_limit.size() <= docker::kMaxDaemonJsonBytes);
  CHECK(ErrorOf(at_limit).rfind("/srv/root/etc/docker/daemon.json:1:1: edited, the file would be ", 0) == 0);
  CHECK(ErrorOf(FlatKeys(800000)).empty());
}

TEST_CASE("json tree: written exactly as ordered_json::dump(4), duplicates as its parse reads them",
          "[docker][daemon_json]") {
  const char* docs[] = {
      "{}",
      "[]",
      "{\"a\": {}, \"b\": [], \"c\": [{}], \"d\": [[]]}",
      R"({"zeta": 1, "log-opts": {"max-size": "10m"}, "pools": [{"base": "10.10.0.0/16", "size": 24}]})",
      R"({"s": "caf\u00e9 \"q\" \\ \n \t \u0001 \ud83d\ude00", "n": [-0, 1e300, 2.5, -7, 18446744073709551615, 1.0]})",
      R"({"dup": 1, "other": 2, "dup": {"x": [1, 2]}, "dup": 3})",  // first place, last value
      R"({"a": {"a": {"a": {"b": null, "b": false}}}})",
      "\xEF\xBB\xBF {\"bom\": true} \n",
      "\"just a string\"",
      "42",
  };
  for (const char* d : docs) {
    INFO(d);
    const ordered_json mine = docker::ReadJsonTree(d, "daemon.json");
    const ordered_json ref = ordered_json::parse(d);
    CHECK(mine == ref);
    CHECK(docker::WriteJsonTree(mine) == ref.dump(4));
    // and in the same order
    CHECK(mine.dump() == ref.dump());
  }
  // Deep (32 levels) and wide: the same text, no recursion in the writer
  const std::string deep = "{\"a\": " + Nested(28, "{\"x\": [1, {\"y\": 2}]}") + "}";
  CHECK(docker::WriteJsonTree(docker::ReadJsonTree(deep, "d")) == ordered_json::parse(deep).dump(4));
  CHECK_THROWS_WITH(
      docker::ReadJsonTree("{\"a\": 1e999}", "/etc/docker/daemon.json"),
      Catch::StartsWith("/etc/docker/daemon.json:1:11: not valid JSON: number overflow parsing '1e999'; "));
  CHECK_THROWS_WITH(docker::ReadJsonTree("{\"a\": 1 /* c */}", "/etc/docker/daemon.json"),
                    Catch::StartsWith("/etc/docker/daemon.json:1:9: not valid JSON: syntax error"));
}

TEST_CASE("daemon.json: every key the edit did not mean to change is kept, at any size",
          "[docker][daemon_json]") {
  // 800 KB of flat keys plus nested objects: every original member survives with its value and place
  std::string text = FlatKeys(800000);  // indented, still within the limit
  text.back() = ',';
  text += R"( "runtimes": {"crun": {"path": "/usr/bin/crun"}}, "features": {"buildkit": true}})";
  REQUIRE(text.size() <= docker::kMaxDaemonJsonBytes);
  docker::DaemonJsonWant want;
  want.default_runtime = true;
  want.cdi = true;
  const auto e = EditDaemonJson(text, want);
  REQUIRE(e.changed);
  // read with the tree (checked against ordered_json::parse above): its own parse is quadratic in the keys
  ordered_json before = docker::ReadJsonTree(text, "a"), after = docker::ReadJsonTree(e.text, "b");
  CHECK(after["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime");
  CHECK(after["features"]["cdi"] == true);
  CHECK(after["default-runtime"] == "nvidia");
  after["runtimes"].erase("nvidia");
  after["features"].erase("cdi");
  after.erase("default-runtime");
  CHECK(after.dump() == before.dump());
  // the diff: a handful of lines change, the rest is kept (the file was one line: all of it is rewritten)
  CHECK(e.diff.rfind("- {", 0) == 0);
  const auto again = EditDaemonJson(e.text, want);
  CHECK_FALSE(again.changed);
}

TEST_CASE("LineDiff: linear, and small where the change is small", "[docker][daemon_json]") {
  std::string a, b;
  for (int i = 0; i < 200000; ++i) {  // 200,000 lines (2.9 MB): an LCS table would be 160 GB
    a += "    \"k" + std::to_string(i) + "\": " + std::to_string(i) + ",\n";
    b += "    \"k" + std::to_string(i) + "\": " + std::to_string(i == 100000 ? -1 : i) + ",\n";
    if (i == 150000) b += "    \"new\": true,\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string d = docker::LineDiff(a, b);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 10.0);
  size_t minus = 0, plus = 0;
  for (size_t at = 0; at < d.size(); at = d.find('\n', at) + 1) {
    minus += d.compare(at, 2, "- ") == 0;
    plus += d.compare(at, 2, "+ ") == 0;
  }
  CHECK(minus == 1);
  CHECK(plus == 2);
  CHECK(d.find("-     \"k100000\": 100000,\n+     \"k100000\": -1,\n") != std::string::npos);
  CHECK(d.find("      \"k150000\": 150000,\n+     \"new\": true,\n      \"k150001\"") != std::string::npos);
  // every line of each side once, in order
  std::string kept_a, kept_b;
  for (size_t at = 0; at < d.size();) {
    const size_t nl = d.find('\n', at);
    const std::string line = d.substr(at + 2, nl - at - 2) + "\n";
    if (d[at] != '+') kept_a += line;
    if (d[at] != '-') kept_b += line;
    at = nl + 1;
  }
  CHECK(kept_a == a);
  CHECK(kept_b == b);
  CHECK(docker::LineDiff("x\ny\n", "y\nx\n") == "- x\n  y\n+ x\n");
  CHECK(docker::LineDiff("}\n}\n", "}\n") == "  }\n- }\n");
}

TEST_CASE("daemon.json: the largest files are edited, or refused, in bounded memory and time",
          "[docker][daemon_json][bounded]") {
  // Peak RSS of a child doing only the edit, above what it inherited; the limits hold under ASan too (its
  // shadow memory and quarantine at least double the figures). Release-build figures: SECURITY.md, Limits.
  struct Case {
    const char* what;
    std::string text;
    int status;
  };
  std::string nested_wide = "{";
  for (int i = 0; nested_wide.size() < docker::kMaxDaemonJsonBytes - 2000; ++i)
    nested_wide +=
        "\"n" + std::to_string(i) + "\": " + Nested(29, "{\"a\": \"xyz\", \"b\": [1, 2, 3]}") + ", ";
  nested_wide += "\"end\": 0}";
  const Case cases[] = {
      {"5 MB of flat keys (refused)", FlatKeys(5000000), 2},
      {"5 MB nested 100,000 deep (refused)", "{\"a\": " + Nested(2500000) + "}", 2},
      {"800 KB of flat keys (edited)", FlatKeys(800000), 0},
      // read and edited whole, then refused: indented they would pass 1 MiB
      {"1 MiB of flat keys (refused after the edit)", FlatKeys(docker::kMaxDaemonJsonBytes), 2},
      {"1 MiB nested 32 deep (refused after the edit)", nested_wide, 2},
      {"1 MiB in one string (refused after the edit)",
       "{\"s\": \"" + std::string(docker::kMaxDaemonJsonBytes - 12, 'x') + "\"}", 2},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const Measured m = InChild(c.text);
    CHECK(m.status == c.status);
    const long used_kb = m.peak_kb - m.baseline_kb;
    CHECK(used_kb < 400 * 1024);  // release build: see docs; ASan: its overhead included
    CHECK(m.seconds < 20.0);
    if (std::getenv("GP_PRINT_FIGURES"))
      std::fprintf(stderr, "%s: %ld KiB above the inherited %ld KiB, %.3f s\n", c.what, used_kb,
                   m.baseline_kb, m.seconds);
  }
}
