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

}  // namespace

RealCommandRunner::RealCommandRunner() : base_(CaptureEnvironment()) {}

CommandResult RealCommandRunner::Run(const Command& cmd) {
  CommandResult res;
  if (cmd.argv.empty()) {
    res.not_found = true;
    return res;
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1}, st_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {out_pipe, err_pipe, in_pipe, st_pipe})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) ::close(p[i]);
  };
  if (::pipe2(out_pipe, O_CLOEXEC) || ::pipe2(err_pipe, O_CLOEXEC) ||
      (cmd.stdin_data && ::pipe2(in_pipe, O_CLOEXEC)) ||
      (cmd.status_fd >= 0 && ::pipe2(st_pipe, O_CLOEXEC))) {
    close_all();
    res.err = std::string("pipe: ") + std::strerror(errno);
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
    close_all();
    res.err = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(cmd.stdin_data ? in_pipe[0] : devnull, 0);
    if (cmd.passthrough_output) {
      ::dup2(2, 1);
    } else {
      ::dup2(out_pipe[1], 1);
      ::dup2(err_pipe[1], 2);
    }
    if (cmd.status_fd >= 0) ::dup2(st_pipe[1], cmd.status_fd);
    ::execvpe(argv[0], argv.data(), envp.data());
    _exit(errno == ENOENT || errno == EACCES ? 127 : 126);
  }
  ::close(out_pipe[1]);
  out_pipe[1] = -1;
  ::close(err_pipe[1]);
  err_pipe[1] = -1;
  if (st_pipe[1] >= 0) {
    ::close(st_pipe[1]);
    st_pipe[1] = -1;
  }
  if (in_pipe[0] >= 0) {
    ::close(in_pipe[0]);
    in_pipe[0] = -1;
    // Small inputs (keys, debconf answers); a writer thread is not needed below the pipe buffer size.
    signal(SIGPIPE, SIG_IGN);
    const std::string& data = *cmd.stdin_data;
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::write(in_pipe[1], data.data() + off, data.size() - off);
      if (n <= 0 && errno != EINTR) break;
      if (n > 0) off += static_cast<size_t>(n);
    }
    ::close(in_pipe[1]);
    in_pipe[1] = -1;
  }

  // The child leads its own process group. At the deadline the whole group gets SIGTERM, two seconds
  // later SIGKILL; half a second after that gpuprep stops reading: a descendant that left the group
  // (setsid) and still holds the pipes open cannot keep the caller waiting.
  const auto deadline = Clock::now() + cmd.timeout;
  bool term_sent = false, kill_sent = false;
  Clock::time_point kill_at, give_up_at;
  std::string status_line_buf;
  int status = 0;
  bool reaped = false, flooded = false;
  bool stop_asked = false;
  for (;;) {
    if (!flooded && res.truncated) {
      flooded = true;  // ended now: what it wrote past the limit is not kept
      ::kill(-pid, SIGKILL);
      term_sent = kill_sent = true;
      give_up_at = Clock::now() + std::chrono::milliseconds(500);
    }
    if (!res.stopped && stop_asked) {  // the reader has what it wants, or saw too much: ended now
      res.stopped = true;
      ::kill(-pid, SIGKILL);
      term_sent = kill_sent = true;
      give_up_at = Clock::now() + std::chrono::milliseconds(500);
    }
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) reaped = true;
    struct pollfd fds[3];
    int nfds = 0;
    int* owners[3];
    for (int* fd : {&out_pipe[0], &err_pipe[0], &st_pipe[0]}) {
      if (*fd >= 0) {
        fds[nfds] = {*fd, POLLIN, 0};
        owners[nfds++] = fd;
      }
    }
    if (nfds == 0 && reaped) break;
    auto now = Clock::now();
    const bool asked_to_end = !term_sent && cmd.keep_running && !cmd.keep_running();
    if (asked_to_end) {
      res.stopped = true;
      ::kill(-pid, SIGTERM);
      term_sent = true;
      kill_at = now + std::chrono::seconds(2);
    } else if (!term_sent && now >= deadline) {
      res.timed_out = true;
      ::kill(-pid, SIGTERM);
      term_sent = true;
      kill_at = now + std::chrono::seconds(2);
    } else if (term_sent && !kill_sent && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      kill_sent = true;
      give_up_at = now + std::chrono::milliseconds(500);
    } else if (kill_sent && now >= give_up_at) {
      break;  // pipes still open: held by something outside the group
    }
    int wait_ms = 50;
    if (nfds > 0) {
      int r = ::poll(fds, static_cast<nfds_t>(nfds), wait_ms);
      if (r > 0) {
        for (int i = 0; i < nfds; ++i) {
          if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          int* fd = owners[i];
          if (cmd.on_output && (fd == &out_pipe[0] || fd == &err_pipe[0]))
            DrainTo(*fd, fd == &out_pipe[0] ? 1 : 2, cmd.on_output, &stop_asked);
          else if (fd == &out_pipe[0])
            Drain(*fd, &res.out, nullptr, nullptr, cmd.max_output, &res.truncated);
          else if (fd == &err_pipe[0])
            Drain(*fd, &res.err, nullptr, nullptr, cmd.max_output, &res.truncated);
          else
            Drain(*fd, nullptr, &status_line_buf, &cmd.on_status_line);
        }
      }
    } else {
      ::usleep(wait_ms * 1000);
    }
  }
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  if (!status_line_buf.empty() && cmd.on_status_line) cmd.on_status_line(status_line_buf);
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
  close_all();
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
