// What every verb gets: the global options and the system seams. Only main builds the real seams
// (ARCHITECTURE.md); tests build a Context with fakes and call RunCli.
#pragma once
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/nvml_session.h"
#include "sys/process.h"
#include "sys/stop_signal.h"

namespace gp::cli {

struct GlobalOptions {
  std::string manifest;         // --manifest NAME|PATH|URL ("" = choose the default)
  std::string manifest_sha256;  // --manifest-sha256 HEX: the stack's documents must hash to it ("" = any)
  bool json = false;            // --json
  std::string root;             // --root DIR ("" = the live host)
  bool verbose = false;         // --verbose
  bool quiet = false;           // -q/--quiet
};

struct Context {
  GlobalOptions opts;
  std::map<std::string, std::string> env;  // the process environment, captured once in main
  std::istream* in = nullptr;              // stdin (nccl-log without FILE); null: nothing to read
  std::ostream* out = nullptr;             // results (stdout)
  std::ostream* err = nullptr;             // messages (stderr); logs go through spdlog
  bool out_is_tty = false;
  bool err_is_tty = false;

  // Seams. make_fs(root) returns the Fs for "/" or a --root tree; local_fs is this machine (manifest
  // files, --host snapshots). native/unix_http/runner are never used for a --root probe.
  std::function<std::unique_ptr<sys::Fs>(const std::string& root)> make_fs;
  sys::Fs* local_fs = nullptr;
  sys::CommandRunner* runner = nullptr;
  sys::NativeLibs* native = nullptr;
  sys::UnixHttp* unix_http = nullptr;
  std::function<std::unique_ptr<sys::HttpClient>()> make_http;  // created on first download only
  std::function<std::string()> today;  // "YYYY-MM-DD" (UTC); unset: date checks are skipped
  // watch: the NVML session, Ctrl-C/SIGTERM for a long run, and the wall clock (ms since 1970). Unset
  // open_nvml reads as "NVML cannot be loaded".
  std::function<sys::NvmlOpenResult(const sys::NvmlSessionOptions&)> open_nvml;
  std::function<std::unique_ptr<sys::Waiter>()> make_waiter;
  std::function<long long()> wall_ms;
  bool root = false;  // running as root (effective uid 0): apply needs it

  bool use_color() const;  // a terminal, no --json, NO_COLOR unset
};

// Parses argv, runs the verb, prints errors as "gpuprep: error: ..." to ctx.err. Returns the exit code.
int RunCli(int argc, const char* const* argv, Context& ctx);

}  // namespace gp::cli
