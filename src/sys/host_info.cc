#include "sys/host_info.h"

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

extern char** environ;

namespace gp::sys {

std::optional<Uname> LiveUname() {
  struct utsname u {};
  if (::uname(&u) != 0) return std::nullopt;
  return Uname{u.machine, u.release};
}

bool RunningAsRoot() { return ::geteuid() == 0; }

std::map<std::string, std::string> CaptureEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

std::string SelfExecutable(const std::string& fallback) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? fallback : p.string();
}

std::string AbsoluteFromCwd(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? path : (cwd / path).lexically_normal().string();
}

long OwnPid() { return static_cast<long>(::getpid()); }

bool ProcessAlive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace gp::sys
