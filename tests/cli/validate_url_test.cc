// manifest validate reads a URL: the real binary fetches a stack from a loopback http server (the one plain
// http gpuprep accepts) and validates it like a file.
#include <catch2/catch.hpp>
#include <string>

#include "apply/harness.h"
#include "sys/process.h"
#include "sys/python_http_server.h"

using namespace gp;

TEST_CASE("manifest validate URL: fetched over loopback http and checked", "[cli][manifest]") {
  test::TempRoot root;
  root.Write("/good.yaml",
             "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
             "metadata:\n  name: site\n");
  root.Write("/bad.yaml",
             "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
             "metadata:\n  name: \"site;x\"\n");
  const test::PythonHttpServer server(root.path(), "127.0.0.1");  // listening once constructed
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
  sys::RealCommandRunner run;
  sys::Command c;
  c.argv = {GP_BINARY, "manifest", "validate", base + "good.yaml"};
  sys::CommandResult r = run.Run(c);
  CHECK(r.exit_code == 0);
  CHECK(r.out == base + "good.yaml: ok (kind Stack)\n");
  c.argv = {GP_BINARY, "manifest", "validate", base + "bad.yaml"};
  r = run.Run(c);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gpuprep: error: " + base + "bad.yaml:5:9: stack name \"site;x\" is not a valid name") ==
        0);
}
