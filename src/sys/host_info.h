// Facts about this process and machine that only a system call gives: kept here so nothing outside sys/
// makes one (ARCHITECTURE.md). Callers on a --root tree do not use these.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace gp::sys {

struct Uname {
  std::string machine;  // "x86_64"
  std::string release;  // "5.15.0-105-generic"
};
std::optional<Uname> LiveUname();  // uname(2)

bool RunningAsRoot();  // effective uid 0

// The process environment as NAME -> value (entries without '=' are skipped). main captures it once; the
// children gpuprep starts get that copy (RealCommandRunner), not whatever the environment is later.
std::map<std::string, std::string> CaptureEnvironment();

long OwnPid();                // getpid(2)
bool ProcessAlive(long pid);  // kill(pid, 0): the process exists (EPERM: it exists, another user's)

// This executable's absolute path (/proc/self/exe), or `fallback` when it cannot be read.
std::string SelfExecutable(const std::string& fallback);

// `path` made absolute against the working directory (lexically normalised); an absolute path, or one
// when the working directory cannot be read, is returned as given.
std::string AbsoluteFromCwd(const std::string& path);

}  // namespace gp::sys
