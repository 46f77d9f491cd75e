#include "sys/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "sys/host_info.h"

namespace gp::sys {
namespace {

using Clock = std::chrono::steady_clock;

// NAME=value lines: the base environment with the command's own variables over it.
std::vector<std::string> BuildEnv(const std::map<std::string, std::string>& base,
                                  const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (const auto& [k, v] : base)
    if (!overrides.count(k)) out.push_back(k + "=" + v);
  for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
  return out;
}

// Reads what is there and hands it to `on_output` (stream 1 or 2); false from it sets *stop. Closes the fd
// at its end.
void DrainTo(int& fd, int stream, const std::function<bool(int, std::string_view)>& on_output, bool* stop) {
  char buf[8192];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    if (!on_output(stream, std::string_view(buf, static_cast<size_t>(n)))) *stop = true;
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  ::close(fd);
  fd = -1;
}

// Reads what is there into `sink`, keeping at most max_output bytes in it; past that, sets *truncated.
void Drain(int& fd, std::string* sink, std::string* linebuf,
           const std::function<void(const std::string&)>* on_line, size_t max_output = kMaxCommandOutput,
           bool* truncated = nullptr) {
  char buf[8192];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    size_t keep = static_cast<size_t>(n);
    if (sink && sink->size() + keep > max_output) {
      keep = max_output - std::min(max_output, sink->size());
      if (truncated) *truncated = true;
    }
    if (sink) sink->append(buf, keep);
    if (linebuf && on_line && *on_line) {
      linebuf->append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = linebuf->find('\n')) != std::string::npos) {
        (*on_line)(linebuf->substr(0, nl));
        linebuf->erase(0, nl + 1);
      }
    }
    return;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  ::close(fd);
  fd = -1;
}

// The four pipes of one command: stdout, stderr, stdin (with stdin_data) and the status fd (status_fd >= 0).
struct Pipes {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, st[2] = {-1, -1};
  void CloseAll() {
    for (int* p : {out, err, in, st})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) ::close(p[i]);
  }
  static void Close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  // "" when every pipe the command needs is open, else why not (and none is).
  std::string Open(const Command& cmd) {
    if (::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC) || (cmd.stdin_data && ::pipe2(in, O_CLOEXEC)) ||
        (cmd.status_fd >= 0 && ::pipe2(st, O_CLOEXEC))) {
      CloseAll();
      return std::string("pipe: ") + std::strerror(errno);
    }
    return "";
  }
};

// In the child after fork: its own process group, the pipes as its fds, then exec (no allocation).
[[noreturn]] void ExecChild(const Command& cmd, const Pipes& p, char** argv, char** envp) {
  ::setpgid(0, 0);
  int devnull = ::open("/dev/null", O_RDWR);
  ::dup2(cmd.stdin_data ? p.in[0] : devnull, 0);
  if (cmd.passthrough_output) {
    ::dup2(2, 1);
  } else {
    ::dup2(p.out[1], 1);
    ::dup2(p.err[1], 2);
  }
  if (cmd.status_fd >= 0) ::dup2(p.st[1], cmd.status_fd);
  ::execvpe(argv[0], argv, envp);
  _exit(errno == ENOENT || errno == EACCES ? 127 : 126);
}

// In the parent after fork: closes the child's ends and writes stdin_data. Small inputs (keys, debconf
// answers); a writer thread is not needed below the pipe buffer size.
void StartParent(const Command& cmd, Pipes& p) {
  Pipes::Close(p.out[1]);
  Pipes::Close(p.err[1]);
  Pipes::Close(p.st[1]);
  if (p.in[0] < 0) return;
  Pipes::Close(p.in[0]);
  signal(SIGPIPE, SIG_IGN);
  const std::string& data = *cmd.stdin_data;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(p.in[1], data.data() + off, data.size() - off);
    if (n <= 0 && errno != EINTR) break;
    if (n > 0) off += static_cast<size_t>(n);
  }
  Pipes::Close(p.in[1]);
}

// Watches one started child: reads its pipes and ends its process group when asked, at the deadline, or
// when its output passes the limit. The child leads its own process group. At the deadline the whole group
// gets SIGTERM, two seconds later SIGKILL; half a second after that gpuprep stops reading: a descendant that
// left the group (setsid) and still holds the pipes open cannot keep the caller waiting.
class Watch {
 public:
  Watch(const Command& cmd, pid_t pid, Pipes& p, CommandResult& res)
      : cmd_(cmd), pid_(pid), p_(p), res_(res), deadline_(Clock::now() + cmd.timeout) {}

  // Runs until the child is reaped and its pipes are closed, or gpuprep gives up on them.
  void Run() {
    for (;;) {
      EndIfAsked();
      if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
      if (OpenFds() == 0 && reaped_) break;
      if (!Escalate()) break;
      Poll();
    }
    if (!reaped_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
    }
    if (!status_line_buf_.empty() && cmd_.on_status_line) cmd_.on_status_line(status_line_buf_);
  }

  int status() const { return status_; }
  bool flooded() const { return flooded_; }

 private:
  void KillNow() {
    ::kill(-pid_, SIGKILL);
    term_sent_ = kill_sent_ = true;
    give_up_at_ = Clock::now() + std::chrono::milliseconds(500);
  }

  // Output past the limit, or a reader that has what it wants: ended now.
  void EndIfAsked() {
    if (!flooded_ && res_.truncated) {
      flooded_ = true;  // what it wrote past the limit is not kept
      KillNow();
    }
    if (!res_.stopped && stop_asked_) {
      res_.stopped = true;
      KillNow();
    }
  }

  int OpenFds() {
    nfds_ = 0;
    for (int* fd : {&p_.out[0], &p_.err[0], &p_.st[0]}) {
      if (*fd >= 0) {
        fds_[nfds_] = {*fd, POLLIN, 0};
        owners_[nfds_++] = fd;
      }
    }
    return nfds_;
  }

  // SIGTERM when keep_running says so or at the deadline, SIGKILL two seconds later; false: give up.
  bool Escalate() {
    const auto now = Clock::now();
    const bool asked_to_end = !term_sent_ && cmd_.keep_running && !cmd_.keep_running();
    if (asked_to_end || (!term_sent_ && now >= deadline_)) {
      (asked_to_end ? res_.stopped : res_.timed_out) = true;
      ::kill(-pid_, SIGTERM);
      term_sent_ = true;
      kill_at_ = now + std::chrono::seconds(2);
    } else if (term_sent_ && !kill_sent_ && now >= kill_at_) {
      ::kill(-pid_, SIGKILL);
      kill_sent_ = true;
      give_up_at_ = now + std::chrono::milliseconds(500);
    } else if (kill_sent_ && now >= give_up_at_) {
      return false;  // pipes still open: held by something outside the group
    }
    return true;
  }

  void Poll() {
    constexpr int kWaitMs = 50;
    if (nfds_ == 0) {
      ::usleep(kWaitMs * 1000);
      return;
    }
    if (::poll(fds_, static_cast<nfds_t>(nfds_), kWaitMs) <= 0) return;
    for (int i = 0; i < nfds_; ++i) {
      if (!(fds_[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int* fd = owners_[i];
      if (cmd_.on_output && (fd == &p_.out[0] || fd == &p_.err[0]))
        DrainTo(*fd, fd == &p_.out[0] ? 1 : 2, cmd_.on_output, &stop_asked_);
      else if (fd == &p_.out[0])
        Drain(*fd, &res_.out, nullptr, nullptr, cmd_.max_output, &res_.truncated);
      else if (fd == &p_.err[0])
        Drain(*fd, &res_.err, nullptr, nullptr, cmd_.max_output, &res_.truncated);
      else
        Drain(*fd, nullptr, &status_line_buf_, &cmd_.on_status_line);
    }
  }

  const Command& cmd_;
  const pid_t pid_;
  Pipes& p_;
  CommandResult& res_;
  const Clock::time_point deadline_;
  Clock::time_point kill_at_, give_up_at_;
  bool term_sent_ = false, kill_sent_ = false, reaped_ = false, flooded_ = false, stop_asked_ = false;
  int status_ = 0;
  std::string status_line_buf_;
  struct pollfd fds_[3] = {};
  int* owners_[3] = {};
  int nfds_ = 0;
};

// The exit code (128+N for signal N), not_found, and the note on output that passed the limit.
void Conclude(const Command& cmd, int status, bool flooded, CommandResult& res) {
  if (flooded) {
    const size_t cap = cmd.max_output;
    const std::string limit =
        cap % (1u << 20) == 0 ? std::to_string(cap >> 20) + " MiB" : std::to_string(cap) + " bytes";
    res.err += "\ngpuprep: output larger than " + limit + ": the command was ended\n";
  }
  if (WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
    if (res.exit_code == 127 && res.out.empty() && res.err.empty()) res.not_found = true;
  } else if (WIFSIGNALED(status)) {
    res.exit_code = 128 + WTERMSIG(status);
  }
}

}  // namespace

RealCommandRunner::RealCommandRunner() : base_(CaptureEnvironment()) {}

CommandResult RealCommandRunner::Run(const Command& cmd) {
  CommandResult res;
  if (cmd.argv.empty()) {
    res.not_found = true;
    return res;
  }
  Pipes p;
  if (std::string why = p.Open(cmd); !why.empty()) {
    res.err = why;
    return res;
  }
  // Everything the child needs is prepared before fork (no allocation after it).
  std::vector<std::string> env = BuildEnv(base_, cmd.env);
  std::vector<char*> envp, argv;
  for (auto& s : env) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = cmd.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    p.CloseAll();
    res.err = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) ExecChild(cmd, p, argv.data(), envp.data());
  StartParent(cmd, p);
  Watch watch(cmd, pid, p, res);
  watch.Run();
  Conclude(cmd, watch.status(), watch.flooded(), res);
  p.CloseAll();
  return res;
}

std::string ShellQuote(const std::string& word) {
  if (word.empty()) return "''";
  bool safe = true;
  for (char c : word) {
    if (c == '\0' || !(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./_-", c))) {
      safe = false;
      break;
    }
  }
  if (safe) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += "'";
  return out;
}

namespace {
// What a shell reads as an assignment when it comes first: NAME=... and bash's NAME+=... (NAME a shell
// variable name, [A-Za-z_][A-Za-z0-9_]*). NAME[...]=... holds '[', which ShellQuote quotes anyway.
bool LooksLikeAssignment(const std::string& w) {
  size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (w[eq - 1] == '+') --eq;
  if (eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    const char c = w[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Words a shell reads as syntax in command position: POSIX's reserved words (XCU 2.4) and bash's
// (function, select, time, coproc, [[, ]]). Those holding other characters than ShellQuote's safe ones
// (!, {, }, [[, ]]) are quoted anyway.
bool ReservedWord(const std::string& w) {
  static const char* const kWords[] = {"case",  "do",       "done",   "elif", "else",  "esac",
                                       "fi",    "for",      "if",     "in",   "then",  "until",
                                       "while", "function", "select", "time", "coproc"};
  for (const char* r : kWords)
    if (w == r) return true;
  return false;
}
}  // namespace

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    std::string w = ShellQuote(argv[i]);
    // An unquoted first word that is an assignment or a reserved word would be read as syntax, not as the
    // command: quote it.
    if (i == 0 && w == argv[i] && (LooksLikeAssignment(w) || ReservedWord(w))) w = "'" + w + "'";
    out += w;
  }
  return out;
}

}  // namespace gp::sys
