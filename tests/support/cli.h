// Runs gpuprep in-process through gp::cli::RunCli with real DiskFs seams and no runner, dlopen or
// Docker socket (tests pass --root or --host, so nothing of this machine is run, loaded or contacted).
#pragma once
#include <map>
#include <string>
#include <vector>

namespace gp::test {

struct CliRun {
  int code = -1;
  std::string out, err;
};

struct CliOptions {
  bool tty = false;                        // stdout is a terminal (colour)
  std::map<std::string, std::string> env;  // the process environment gpuprep sees
  std::string local_root = "/";            // where "this machine's" files are (/etc/gpuprep/site.yaml...)
  bool root = false;                       // gpuprep runs as root (whatever uid the tests have)
  std::string stdin_text;                  // what gpuprep reads on stdin
};

// RunCli({"gpuprep", args...}).
CliRun Gpuprep(const std::vector<std::string>& args, const CliOptions& options = {});

}  // namespace gp::test
