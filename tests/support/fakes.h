// Test doubles for the system seams (ARCHITECTURE.md: fakes replace only the seams): they record what was
// done and fail on request. FakeCommandRunner for commands, LiveDiskFs for a tree read as the live host
// (support/map_fs.h holds the in-memory Fs).
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "sys/process.h"

namespace gp::test {

// Records every Command. Answers from rules matched on the joined argv prefix ("apt-get install"); the
// first matching rule wins; unmatched commands exit 0 with empty output (or fail, with strict=true).
class FakeCommandRunner : public sys::CommandRunner {
 public:
  struct Rule {
    std::string argv_prefix;  // compared against ShellJoin(argv) prefix
    sys::CommandResult result;
    int times = -1;                                        // -1: forever; N: consumed after N matches
    std::function<void(const sys::Command&)> side_effect;  // e.g. write files like the real program
  };
  void On(const std::string& argv_prefix, sys::CommandResult result, int times = -1,
          std::function<void(const sys::Command&)> side_effect = nullptr) {
    rules.push_back(Rule{argv_prefix, std::move(result), times, std::move(side_effect)});
  }
  sys::CommandResult Run(const sys::Command& cmd) override {
    calls.push_back(cmd);
    std::string joined = sys::ShellJoin(cmd.argv);
    for (auto& r : rules) {
      if (r.times == 0) continue;
      if (joined.compare(0, r.argv_prefix.size(), r.argv_prefix) != 0) continue;
      if (r.times > 0) --r.times;
      if (r.side_effect) r.side_effect(cmd);
      return r.result;
    }
    sys::CommandResult res;
    if (strict) {
      res.exit_code = 127;
      res.not_found = true;
      res.err = "FakeCommandRunner: unexpected command: " + joined;
    } else {
      res.exit_code = 0;
    }
    return res;
  }
  // Joined argv of every call, in order.
  std::vector<std::string> Joined() const {
    std::vector<std::string> out;
    for (const auto& c : calls) out.push_back(sys::ShellJoin(c.argv));
    return out;
  }
  std::vector<Rule> rules;
  std::vector<sys::Command> calls;
  bool strict = false;
};

// A DiskFs over a directory that says it is the live host ("/"), so probes take their live-only paths
// (NVML, dlopen, the Docker socket) over the tree's files.
class LiveDiskFs : public sys::DiskFs {
 public:
  using sys::DiskFs::DiskFs;
  bool IsLive() const override { return true; }
};

inline sys::CommandResult Exit(int code, std::string out = "", std::string err = "") {
  sys::CommandResult r;
  r.exit_code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

}  // namespace gp::test
