// `gpuprep manifest ...` through gp::cli::RunCli with a real DiskFs: exit codes and exact output lines.
#include "support/cli.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace {

using Run = gp::test::CliRun;
using gp::test::Gpuprep;

const std::string kDir = std::string(GP_FIXTURES) + "/manifests/";

}  // namespace

TEST_CASE("manifest validate: a broken file is one line on stderr and exit 2", "[manifest]") {
  Run r = Gpuprep({"manifest", "validate", kDir + "broken-unknown-key.yaml"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "gpuprep: error: " + kDir +
                     "broken-unknown-key.yaml:6:1: unknown key \"drivr\" (did you mean \"driver\"?)\n");

  r = Gpuprep({"manifest", "validate", kDir + "broken-syntax.yaml"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: " + kDir +
                     "broken-syntax.yaml:5:1: YAML syntax error: end of sequence flow not found\n");

  r = Gpuprep({"manifest", "validate", kDir + "missing.yaml"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: cannot read " + kDir + "missing.yaml: no such file\n");
}

TEST_CASE("manifest validate: a good file", "[manifest]") {
  Run r = Gpuprep({"manifest", "validate", kDir + "site.yaml"});
  CHECK(r.code == 0);
  CHECK(r.out == kDir + "site.yaml: ok (kind Stack)\n");
  CHECK(r.err.empty());
  r = Gpuprep({"manifest", "validate", std::string(GP_SOURCE_DIR) + "/manifests/compat.yaml"});
  CHECK(r.code == 0);
  CHECK(r.out == std::string(GP_SOURCE_DIR) + "/manifests/compat.yaml: ok (kind Compat)\n");
}

TEST_CASE("manifest validate: a stack claiming a board its NCCL cannot run is a warning, exit 0",
          "[manifest]") {
  const std::string dir = std::string(GP_SOURCE_DIR) + "/manifests/stacks/";
  Run r = Gpuprep({"manifest", "validate", dir + "volta-r580.173.02-cuda12.9.1.yaml"});
  CHECK(r.code == 0);
  CHECK(r.out == dir + "volta-r580.173.02-cuda12.9.1.yaml: ok (kind Stack)\n");
  const std::string head =
      "gpuprep: warning: " + dir +
      "volta-r580.173.02-cuda12.9.1.yaml: stack.library-unsupported-board: stack claims ";
  const std::string nccl = " but NCCL 2.30.7 (its CUDA 12.9 build) has no code for compute capability 5.2";
  CHECK(r.err.find(head + "Tesla M60 (0x13f2, maxwell)" + nccl) != std::string::npos);
  CHECK(r.err.find(head + "Tesla M40 (0x17fd, maxwell)" + nccl) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2);
  r = Gpuprep({"manifest", "validate", dir + "volta-r580-cuda12.9.yaml"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  r = Gpuprep({"--json", "manifest", "validate", dir + "volta-r580.173.02-cuda12.9.1.yaml"});
  CHECK(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["warnings"].size() == 2);
  CHECK(doc["warnings"][0]["code"] == "stack.library-unsupported-board");
}

TEST_CASE("manifest list and show", "[manifest]") {
  Run r = Gpuprep({"manifest", "list"});
  CHECK(r.code == 0);
  CHECK(r.out.find("NAME ") == 0);
  CHECK(r.out.find("\nubuntu22.04-r535-cuda12.2               ubuntu 22.04  ") != std::string::npos);
  CHECK(
      r.out.find("R535 LTS  12.2.2   nvcr.io/nvidia/pytorch:23.10-py3  (legacy: only with --manifest; driver "
                 "branch end of life 2026-06)\n") != std::string::npos);
  CHECK(r.out.find("R580 LTS  13.0.2   nvcr.io/nvidia/pytorch:25.12-py3\n") != std::string::npos);
  // Then this machine: the stack a new host like it would get, and why.
  CHECK(r.out.find("\ndefault for a new host like this one: ") != std::string::npos);

  r = Gpuprep({"manifest", "list", "--json"});
  CHECK(r.code == 0);
  CHECK(r.out.find("\"name\": \"hopper-r580-cuda13.0\"") != std::string::npos);
  CHECK(r.out.find("\"driver_branch\": 580") != std::string::npos);
  CHECK(r.out.find("\"legacy\": true") != std::string::npos);
  CHECK(r.out.find("\"legacy\": false") != std::string::npos);
  CHECK(r.out.find("\"driver_end_of_life\": \"2026-06\"") != std::string::npos);

  r = Gpuprep({"manifest", "show", kDir + "site.yaml"});
  CHECK(r.code == 0);
  CHECK(r.out.find("stack site-r535 (" + kDir + "site.yaml)\nextends ubuntu22.04-r535-cuda12.2\n") == 0);
  CHECK(r.out.find("\n  driver.version ") != std::string::npos);
  CHECK(r.out.find(" 535.183.01  # " + kDir + "site.yaml:8:12\n") != std::string::npos);
  CHECK(r.out.find(" https://nvidia.github.io/libnvidia-container/stable/deb/amd64/ (key "
                   "C95B321B61E88C1809C4F759DDCAE044F796ECB0)  # "
                   "manifests/stacks/ubuntu22.04-r535-cuda12.2.yaml:46:5\n") != std::string::npos);
  CHECK(r.out.find("image.cuda ") != std::string::npos);

  r = Gpuprep({"manifest", "show", "hoper-r580-cuda13.0"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: no embedded stack or file named \"hoper-r580-cuda13.0\" (did you mean "
        "\"hopper-r580-cuda13.0\"?)\n");

  r = Gpuprep({"manifest", "show", "--json", "blackwell-r580-cuda13.0"});
  CHECK(r.code == 0);
  CHECK(r.out.find("\"extends\": [\n    \"hopper-r580-cuda13.0\"\n  ]") != std::string::npos);
  CHECK(r.out.find("\"driver.version\": \"manifests/stacks/hopper-r580-cuda13.0.yaml:") != std::string::npos);
  // The docker: section, inherited from the Hopper stack; none in the legacy stack.
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["docker"]["engine"] == "docker.io");
  CHECK(doc["docker"]["gpu_access"] == "runtime");
  CHECK(doc["docker"]["packages"] == nlohmann::json::array({{{"name", "docker.io"}, {"version", ""}}}));
  CHECK(doc["docker"]["toolkit_mode"].is_null());
  r = Gpuprep({"manifest", "show", "--json", "ubuntu22.04-r535-cuda12.2"});
  CHECK(nlohmann::json::parse(r.out)["docker"].is_null());
  r = Gpuprep({"manifest", "show", "volta-r580-cuda12.9"});
  CHECK(r.out.find("\n  docker.engine ") != std::string::npos);
  CHECK(r.out.find(" docker.io  # manifests/stacks/hopper-r580-cuda13.0.yaml:") != std::string::npos);
  CHECK(r.out.find("\n  docker.gpu_access ") != std::string::npos);
}

TEST_CASE("--manifest-sha256 pins the stack manifest show and launch use", "[manifest][launch]") {
  const std::string stack = "hopper-r580.173.02-cuda13.0.3";
  Run show = Gpuprep({"manifest", "show", stack});
  REQUIRE(show.code == 0);
  const std::string wrong(64, 'a');
  Run bad = Gpuprep({"--manifest-sha256", wrong, "manifest", "show", stack});
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("--manifest-sha256: the stack " + stack + " now has sha256 ") != std::string::npos);
  Run malformed = Gpuprep({"--manifest-sha256", "xyz", "manifest", "show", stack});
  CHECK(malformed.code == 2);
  CHECK(malformed.err.find("must be 64 lower-case hex digits") != std::string::npos);
  // The right one: the sha256 the error names.
  const std::string marker = "now has sha256 ";
  const std::string right = bad.err.substr(bad.err.find(marker) + marker.size(), 64);
  Run good = Gpuprep({"--manifest-sha256", right, "manifest", "show", stack});
  CHECK(good.code == 0);
  CHECK(good.out == show.out);

  const std::string host = std::string(GP_FIXTURES) + "/snapshots/h100x2-runtime.json";
  Run launch = Gpuprep({"--manifest", stack, "--manifest-sha256", wrong, "launch", "--host", host, "--format",
                        "docker", "--", "python", "train.py"});
  CHECK(launch.code == 2);
  CHECK(launch.out.empty());
  CHECK(launch.err.find("--manifest-sha256") != std::string::npos);
  Run alone = Gpuprep({"--manifest-sha256", right, "launch", "--host", host, "--", "python", "train.py"});
  CHECK(alone.code == 2);
  CHECK(alone.err.find("give --manifest too") != std::string::npos);
  Run pinned = Gpuprep({"--manifest", stack, "--manifest-sha256", right, "launch", "--host", host, "--format",
                        "docker", "--", "python", "train.py"});
  CHECK(pinned.code == 0);
}
