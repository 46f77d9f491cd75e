// Hostile input through the whole CLI: each case gives one line and the documented exit code, valid JSON,
// and nothing raw on the terminal.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "support/cli.h"
#include "util/input.h"

using gp::test::Gpuprep;

namespace {
// A copy of a fixture host tree, removed afterwards.
struct HostCopy {
  gp::test::TempRoot dir;
  explicit HostCopy(const std::string& fixture) {
    const std::string cmd =
        "cp -a '" + std::string(GP_FIXTURES) + "/hosts/" + fixture + "/.' '" + dir.path() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(dir.path() + path, std::ios::trunc | std::ios::binary) << text;
  }
};

bool OneLine(const std::string& err) {
  return !err.empty() && err.back() == '\n' && err.find('\n') == err.size() - 1 &&
         err.find('\x1b') == std::string::npos;
}
}  // namespace

TEST_CASE("cli: --root \"\" is refused, not the live host", "[cli][hardening]") {
  for (const char* verb : {"doctor", "plan", "apply"}) {
    auto r = Gpuprep({"--root", "", verb});
    CHECK(r.code == 2);
    CHECK(r.err.find("--root") != std::string::npos);
    CHECK(r.err.find("must not be empty") != std::string::npos);
    CHECK(OneLine(r.err));
    CHECK(r.out.empty());
  }
}

TEST_CASE("cli: invalid UTF-8 from a probed file gives valid JSON, with the replacement reported",
          "[cli][hardening]") {
  HostCopy host("healthy-h100");
  host.Write("/etc/os-release",
             "PRETTY_NAME=\"Ubuntu \xff\xfe 22.04\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n");
  auto r = Gpuprep({"--root", host.dir.path(), "--json", "doctor"});
  CHECK((r.code == 0 || r.code == 1));
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(r.out));
  CHECK_FALSE(gp::InvalidUtf8At(r.out));
  CHECK(r.out.find("Ubuntu \xef\xbf\xbd\xef\xbf\xbd 22.04") != std::string::npos);
  // Two bad bytes, in every value that quotes the OS name (host.os.pretty_name and the os layer's text).
  CHECK(r.err.find("gpuprep: warning: ") != std::string::npos);
  CHECK(r.err.find(" byte(s) that were not valid UTF-8 were replaced with U+FFFD in the JSON output\n") !=
        std::string::npos);
}

TEST_CASE("cli: terminal escapes and newlines from files are escaped in the table", "[cli][hardening]") {
  HostCopy host("healthy-h100");
  host.Write(
      "/etc/os-release",
      "PRETTY_NAME=\"Ubuntu\x1b[2J\x1b]0;owned\x07\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n");
  host.Write("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  5\x1b[31m35\n");
  auto r = Gpuprep({"--root", host.dir.path(), "doctor"});
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\x07') == std::string::npos);
  CHECK(r.out.find("Ubuntu\\e[2J\\e]0;owned\\x07") != std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("cli: a deeply nested launch --host snapshot is one error line, exit 2", "[cli][hardening]") {
  gp::test::TempRoot dir;
  const std::string path = dir.path() + "/deep.json";
  std::ofstream(path) << std::string(200000, '[') << std::string(200000, ']');
  auto r = Gpuprep({"launch", "--host", path, "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: " + path + ":1:33: nested deeper than 32 levels\n");
}

TEST_CASE("cli: size limits are reported as such", "[cli][hardening]") {
  gp::test::TempRoot dir;
  const std::string big = dir.path() + "/big.yaml";
  std::ofstream(big) << "# " << std::string(2 << 20, 'x') << "\n";
  auto r = Gpuprep({"manifest", "validate", big});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: cannot read " + big + ": larger than the 1 MiB limit\n");

  const std::string huge = dir.path() + "/huge.json";
  { std::ofstream touch(huge); }
  REQUIRE(::truncate(huge.c_str(), (64 << 20) + 1) == 0);  // sparse: no disk used
  r = Gpuprep({"launch", "--host", huge, "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --host: cannot read " + huge + ": larger than the 16 MiB limit\n");
  r = Gpuprep({"manifest", "validate", dir.path() + "/missing.yaml"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: cannot read " + dir.path() + "/missing.yaml: no such file\n");
}

TEST_CASE("cli: manifest validate refuses hostile values with one line, exit 2", "[cli][hardening]") {
  gp::test::TempRoot dir;
  const std::string path = dir.path() + "/evil.yaml";
  std::ofstream(path) << "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
                         "metadata:\n  name: \"evil\\n$(reboot)\"\n";
  auto r = Gpuprep({"manifest", "validate", path});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: " + path +
                     ":5:9: expected one line, got a value with a line break or control character\n");
  // validate reads URLs too; off-loopback plain http is refused before anything is fetched.
  r = Gpuprep({"manifest", "validate", "http://127.0.0.1@example.com/s.yaml"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: http://127.0.0.1@example.com/s.yaml: not a usable URL: user information (user@) is "
        "not allowed\n");
}

TEST_CASE("cli: the doctor document keeps its key order", "[cli][hardening]") {
  auto r = Gpuprep({"--root", std::string(GP_FIXTURES) + "/hosts/healthy-h100", "--json", "doctor"});
  const auto doc = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"gpuprep", "manifest", "host", "layers", "summary"});
}

// Found by fuzz_snapshot: a number too large for a double was an uncaught nlohmann out_of_range.
TEST_CASE("cli: a snapshot number out of range is one error line, exit 2", "[cli][hardening]") {
  gp::test::TempRoot dir;
  const std::string path = dir.path() + "/big.json";
  std::ofstream(path) << "{\"host\": {\n  \"cpus\": 1e999}}\n";
  auto r = Gpuprep({"launch", "--host", path, "--image", "nvcr.io/nvidia/pytorch:24.05-py3", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: " + path + ":2:11: invalid JSON: number overflow parsing '1e999'\n");
}
