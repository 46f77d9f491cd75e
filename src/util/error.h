// gpuprep's one error policy (docs/cli.md, "Exit codes"): code below main throws these, main prints
// "gpuprep: error: <what>" once and exits with the code.
#pragma once
#include <stdexcept>
#include <string>

namespace gp {

enum ExitCode : int {
  kExitOk = 0,      // nothing failed
  kExitFailed = 1,  // a check or step failed (doctor, verify, apply)
  kExitUsage = 2,   // bad usage, bad manifest, bad input, launch request the host cannot satisfy
  kExitReboot = 3,  // a reboot is required before apply can continue
};

// A user-facing error. what() is the whole message after "gpuprep: error: ".
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad input in a file: message becomes "PATH:LINE:COL: message" (1-based line and column).
class FileError : public Error {
 public:
  FileError(const std::string& path, int line, int col, const std::string& message)
      : Error(kExitUsage, path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message) {}
};

// Bad flag: message becomes "--flag: message".
class FlagError : public Error {
 public:
  FlagError(const std::string& flag, const std::string& message) : Error(kExitUsage, flag + ": " + message) {}
};

// Bad usage or input with no better location.
inline Error UsageError(const std::string& message) { return Error(kExitUsage, message); }

}  // namespace gp
