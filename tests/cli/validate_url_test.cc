// manifest validate reads a URL: the real binary fetches a stack from a loopback http server (the one plain
// http gpuprep accepts) and validates it like a file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "apply/harness.h"
#include "sys/process.h"

using namespace gp;

TEST_CASE("manifest validate URL: fetched over loopback http and checked", "[cli][manifest]") {
  test::TempRoot root;
  root.Write("/good.yaml",
             "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
             "metadata:\n  name: site\n");
  root.Write("/bad.yaml",
             "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
             "metadata:\n  name: \"site;x\"\n");
  const int port = 40000 + static_cast<int>(::getpid() % 20000);
  const pid_t server = ::fork();
  if (server == 0) {
    const std::string p = std::to_string(port);
    ::execlp("python3", "python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
             root.path().c_str(), p.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/";
  sys::RealCommandRunner run;
  sys::Command c;
  c.argv = {GP_BINARY, "manifest", "validate", base + "good.yaml"};
  sys::CommandResult r;
  for (int i = 0; i < 50; ++i) {  // the server needs a moment to listen
    r = run.Run(c);
    if (r.err.find("Connection refused") == std::string::npos &&
        r.err.find("Couldn't connect") == std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(r.exit_code == 0);
  CHECK(r.out == base + "good.yaml: ok (kind Stack)\n");
  c.argv = {GP_BINARY, "manifest", "validate", base + "bad.yaml"};
  r = run.Run(c);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gpuprep: error: " + base + "bad.yaml:5:9: stack name \"site;x\" is not a valid name") ==
        0);
  ::kill(server, SIGTERM);
  ::waitpid(server, nullptr, 0);
}
