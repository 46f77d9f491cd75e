// The command seam: every program gpuprep runs is an argv vector (never a shell string) run through a
// CommandRunner. Tests use FakeCommandRunner (tests/support) which records each Command and answers
// from a script.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gp::sys {

// The default for Command::max_output (gpuprep's own bound: the programs it reads answer in kilobytes).
inline constexpr size_t kMaxCommandOutput = 16u << 20;

struct Command {
  std::vector<std::string> argv;             // argv[0] is looked up in PATH when it has no '/'
  std::map<std::string, std::string> env;    // added to (or overriding) the inherited environment
  std::chrono::milliseconds timeout{30000};  // killed (SIGTERM, then SIGKILL after 2 s) when exceeded
  std::optional<std::string> stdin_data;     // fed to stdin; otherwise stdin is /dev/null
  bool passthrough_output = false;           // true: child writes to our stderr (apt progress); not captured
  // Called with each complete line the child writes to this extra fd (APT::Status-Fd progress); -1 = none.
  int status_fd = -1;
  std::function<void(const std::string&)> on_status_line;
  // The most of stdout, and of stderr, that is kept; a command writing more is ended (its process group
  // killed), `truncated` is set and `err` says so.
  size_t max_output = kMaxCommandOutput;
  // Streaming: when set, each chunk the child writes goes here as it arrives (stream 1 stdout, 2 stderr)
  // instead of into CommandResult::out/err, and max_output does not apply; false ends the command's process
  // group at once (`stopped`).
  std::function<bool(int stream, std::string_view chunk)> on_output;
  // Asked about every 50 ms while the command runs; false ends it as a timeout does (SIGTERM to the group,
  // SIGKILL 2 s later), with `stopped` set instead of `timed_out`.
  std::function<bool()> keep_running;
};

struct CommandResult {
  int exit_code = -1;  // the child's exit status; 128+N when killed by signal N; -1 when not started
  bool timed_out = false;
  bool not_found = false;  // argv[0] does not exist or is not executable
  std::string out;         // captured stdout (empty with passthrough_output)
  std::string err;         // captured stderr
  bool truncated = false;  // stdout or stderr went past Command::max_output: the command was ended
  bool stopped = false;    // on_output or keep_running asked for the end
  bool ok() const { return exit_code == 0 && !timed_out; }
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult Run(const Command& cmd) = 0;
};

// fork/exec with pipes, poll()-driven capture, a timeout per command. Never uses a shell. A child's
// environment is `base` (what main captured at start) with each Command's env added over it.
class RealCommandRunner : public CommandRunner {
 public:
  explicit RealCommandRunner(std::map<std::string, std::string> base) : base_(std::move(base)) {}
  RealCommandRunner();  // tests: the environment as it is when the runner is made (CaptureEnvironment)
  CommandResult Run(const Command& cmd) override;

 private:
  std::map<std::string, std::string> base_;
};

// Renders argv for logs and "plan --format sh": each word POSIX-shell-quoted only when needed, so that
// bash, dash and Python's shlex.split read the argv back. The first word is quoted too when a shell would
// take it for syntax: a reserved word (if, time, ...) or an assignment (x=1, x+=1). (A program whose name
// starts with '%' cannot be run by name from bash, which reads it as a job, quoted or not.)
std::string ShellJoin(const std::vector<std::string>& argv);
// One word: unchanged when it is made of [A-Za-z0-9@%+=:,./_-] only, else in single quotes ('' for "").
std::string ShellQuote(const std::string& word);

}  // namespace gp::sys
