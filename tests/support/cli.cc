#include "support/cli.h"

#include <memory>
#include <sstream>

#include "cli/context.h"
#include "sys/fs.h"

namespace gp::test {

CliRun Gpuprep(const std::vector<std::string>& args, const CliOptions& options) {
  sys::DiskFs local(options.local_root);
  std::ostringstream out, err;
  std::istringstream in(options.stdin_text);
  cli::Context ctx;
  ctx.in = &in;
  ctx.out = &out;
  ctx.err = &err;
  ctx.out_is_tty = options.tty;
  ctx.env = options.env;
  ctx.local_fs = &local;
  ctx.root = options.root;
  ctx.make_fs = [](const std::string& root) {
    return std::make_unique<sys::DiskFs>(root.empty() ? "/" : root);
  };
  std::vector<const char*> argv = {"gpuprep"};
  for (const auto& a : args) argv.push_back(a.c_str());
  CliRun r;
  r.code = cli::RunCli(static_cast<int>(argv.size()), argv.data(), ctx);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace gp::test
