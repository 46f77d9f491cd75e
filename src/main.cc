// The only place real seams are built (ARCHITECTURE.md). Everything else gets them through cli::Context.
#include <unistd.h>

#include <iostream>

#include "cli/context.h"
#include "sys/clock.h"
#include "sys/host_info.h"

int main(int argc, char** argv) {
  using namespace gp;
  cli::Context ctx;
  ctx.env = sys::CaptureEnvironment();
  ctx.in = &std::cin;
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  ctx.out_is_tty = isatty(STDOUT_FILENO);
  ctx.err_is_tty = isatty(STDERR_FILENO);

  sys::DiskFs local_fs("/");
  sys::RealCommandRunner runner(ctx.env);  // children get the environment captured above
  sys::DlopenNativeLibs native;
  sys::RealUnixHttp unix_http;
  ctx.local_fs = &local_fs;
  ctx.runner = &runner;
  ctx.native = &native;
  ctx.unix_http = &unix_http;
  ctx.make_fs = [](const std::string& root) {
    return std::make_unique<sys::DiskFs>(root.empty() ? "/" : root);
  };
  ctx.make_http = [] { return sys::MakeCurlHttpClient(); };
  ctx.today = [] { return sys::TodayUtc(); };
  ctx.open_nvml = [](const sys::NvmlSessionOptions& o) { return sys::OpenNvmlSession(o); };
  ctx.make_waiter = [] { return std::make_unique<sys::StopSignal>(); };
  ctx.wall_ms = [] { return sys::UnixMillis(); };
  ctx.root = sys::RunningAsRoot();

  std::ios::sync_with_stdio(false);
  int rc = cli::RunCli(argc, argv, ctx);
  std::cout.flush();
  return rc;
}
