// EditDaemonJson: every daemon.json case the issue names keeps what it must (values and order), refuses what
// is not JSON with its line and column, and reports no change when the file is already configured.
#include "docker/daemon_json.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "util/error.h"

using namespace gp;
using docker::DaemonJsonWant;
using docker::EditDaemonJson;

namespace {

std::string ErrorOf(const std::optional<std::string>& text, const DaemonJsonWant& want = {}) {
  try {
    EditDaemonJson(text, want, "/etc/docker/daemon.json");
  } catch (const Error& e) {
    CHECK(e.code() == kExitUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("daemon.json: absent and empty files become the runtime entry", "[docker][daemon_json]") {
  const std::string want_text =
      "{\n    \"runtimes\": {\n        \"nvidia\": {\n            \"path\": \"nvidia-container-runtime\",\n"
      "            \"runtimeArgs\": []\n        }\n    }\n}\n";
  for (const std::optional<std::string>& in : {std::optional<std::string>{}, std::optional<std::string>{""},
                                               std::optional<std::string>{"  \n\t\n"}}) {
    auto e = EditDaemonJson(in, {});
    CHECK(e.changed);
    CHECK(e.text == want_text);
    CHECK_FALSE(e.restart_required);
    CHECK(e.changes == std::vector<std::string>{"runtimes.nvidia: added (path nvidia-container-runtime)"});
  }
}

TEST_CASE("daemon.json: \"runtimes\": null is replaced, every other key keeps value and order",
          "[docker][daemon_json]") {
  auto e = EditDaemonJson(
      std::string(R"({"log-driver": "json-file", "runtimes": null, "data-root": "/data/docker"})"), {});
  CHECK(e.changed);
  CHECK(e.text ==
        "{\n    \"log-driver\": \"json-file\",\n    \"runtimes\": {\n        \"nvidia\": {\n"
        "            \"path\": \"nvidia-container-runtime\",\n            \"runtimeArgs\": []\n        }\n   "
        " },\n"
        "    \"data-root\": \"/data/docker\"\n}\n");
  CHECK(e.changes.front() == "runtimes: null -> {}");
}

TEST_CASE("daemon.json: other runtimes, nested keys and other features keys stay, in order",
          "[docker][daemon_json]") {
  const std::string in = R"({
  "zeta": 1,
  "runtimes": {"crun": {"path": "/usr/bin/crun", "runtimeArgs": ["--debug"]}},
  "log-opts": {"max-size": "10m", "max-file": "3", "labels": "a,b"},
  "default-address-pools": [{"base": "10.10.0.0/16", "size": 24}],
  "features": {"containerd-snapshotter": true, "buildkit": false},
  "alpha": {"nested": {"deeper": [1, 2.5, "x", null, true]}}
})";
  DaemonJsonWant want;
  want.default_runtime = true;
  want.cdi = true;
  auto e = EditDaemonJson(in, want);
  REQUIRE(e.changed);
  CHECK(e.restart_required);  // features.cdi is taken at start only
  auto j = nlohmann::ordered_json::parse(e.text);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"zeta", "runtimes", "log-opts", "default-address-pools", "features",
                                         "alpha", "default-runtime"});
  std::vector<std::string> rts, fs, logs;
  for (auto it = j["runtimes"].begin(); it != j["runtimes"].end(); ++it) rts.push_back(it.key());
  for (auto it = j["features"].begin(); it != j["features"].end(); ++it) fs.push_back(it.key());
  for (auto it = j["log-opts"].begin(); it != j["log-opts"].end(); ++it) logs.push_back(it.key());
  CHECK(rts == std::vector<std::string>{"crun", "nvidia"});
  CHECK(fs == std::vector<std::string>{"containerd-snapshotter", "buildkit", "cdi"});
  CHECK(logs == std::vector<std::string>{"max-size", "max-file", "labels"});
  CHECK(j["runtimes"]["crun"]["runtimeArgs"][0] == "--debug");
  CHECK(j["features"]["containerd-snapshotter"] == true);
  CHECK(j["features"]["buildkit"] == false);
  CHECK(j["features"]["cdi"] == true);
  CHECK(j["default-runtime"] == "nvidia");
  CHECK(j["alpha"]["nested"]["deeper"].dump() == R"([1,2.5,"x",null,true])");
  CHECK(j["default-address-pools"][0]["size"] == 24);
  CHECK(e.changes == std::vector<std::string>{"runtimes.nvidia: added (path nvidia-container-runtime)",
                                              "default-runtime: absent -> \"nvidia\"",
                                              "features.cdi: absent -> true"});
  CHECK(e.diff.find("+         \"cdi\": true") != std::string::npos);
  CHECK(e.diff.find("-   \"zeta\": 1,\n") != std::string::npos);  // re-indented: 2 spaces become 4
  CHECK(e.diff.find("+     \"zeta\": 1,\n") != std::string::npos);
}

TEST_CASE("daemon.json: already configured means no change, no write, no reload", "[docker][daemon_json]") {
  const std::string in =
      R"({"default-runtime": "nvidia", "runtimes": {"nvidia": {"args": [], "path": "/usr/bin/nvidia-container-runtime"}}, "features": {"cdi": true}})";
  DaemonJsonWant want;
  want.default_runtime = true;
  want.cdi = true;
  auto e = EditDaemonJson(in, want);
  CHECK_FALSE(e.changed);
  CHECK(e.text.empty());
  CHECK(e.changes.empty());
  CHECK_FALSE(e.restart_required);
}

TEST_CASE("daemon.json: an nvidia entry with another path gets the path, its other keys stay",
          "[docker][daemon_json]") {
  auto e = EditDaemonJson(
      std::string(R"({"runtimes": {"nvidia": {"path": "/opt/old/runc", "runtimeArgs": ["--x"]}}})"), {});
  REQUIRE(e.changed);
  auto j = nlohmann::ordered_json::parse(e.text);
  CHECK(j["runtimes"]["nvidia"]["path"] == "nvidia-container-runtime");
  CHECK(j["runtimes"]["nvidia"]["runtimeArgs"][0] == "--x");
  CHECK(e.changes ==
        std::vector<std::string>{"runtimes.nvidia.path: \"/opt/old/runc\" -> \"nvidia-container-runtime\""});
  CHECK_FALSE(e.restart_required);  // runtimes are reloaded on SIGHUP
}

TEST_CASE("daemon.json: default-runtime and features.cdi only as the stack says", "[docker][daemon_json]") {
  const std::string in = R"({"default-runtime": "runc", "features": {"cdi": true}})";
  auto e = EditDaemonJson(in, {});  // no default runtime asked, CDI left alone
  auto j = nlohmann::ordered_json::parse(e.text);
  CHECK(j["default-runtime"] == "runc");
  CHECK(j["features"]["cdi"] == true);
  DaemonJsonWant off;
  off.cdi = false;
  auto e2 = EditDaemonJson(in, off);
  CHECK(nlohmann::ordered_json::parse(e2.text)["features"]["cdi"] == false);
  CHECK(e2.restart_required);
  CHECK(std::find(e2.changes.begin(), e2.changes.end(), "features.cdi: true -> false") != e2.changes.end());
}

TEST_CASE("daemon.json: invalid JSON is refused with its line and column", "[docker][daemon_json]") {
  CHECK(ErrorOf(std::string("{\n  \"debug\": true,\n  \"runtimes\": {,}\n}\n"))
            .rfind("/etc/docker/daemon.json:3:16: not valid JSON: ", 0) == 0);
  CHECK(ErrorOf(std::string("{\"a\": 1}\n}")).rfind("/etc/docker/daemon.json:2:1: not valid JSON: ", 0) == 0);
  CHECK(ErrorOf(std::string("{\"a\": ")).rfind("/etc/docker/daemon.json:1:7: not valid JSON: ", 0) == 0);
  CHECK(ErrorOf(std::string("[1, 2]")) ==
        "/etc/docker/daemon.json:1:1: Docker's configuration must be a JSON object, found array");
  CHECK(ErrorOf(std::string("{\n  \"runtimes\": [\"nvidia\"]\n}")) ==
        "/etc/docker/daemon.json:2:15: \"runtimes\" is array, Docker expects an object; correct it by hand");
  CHECK(ErrorOf(std::string("{\"runtimes\": {\"nvidia\": \"x\"}}")) ==
        "/etc/docker/daemon.json:1:25: \"runtimes.nvidia\" is string, Docker expects an object; correct it "
        "by hand");
  DaemonJsonWant cdi;
  cdi.cdi = true;
  CHECK(
      ErrorOf(std::string("{\"features\": true}"), cdi) ==
      "/etc/docker/daemon.json:1:14: \"features\" is boolean, Docker expects an object; correct it by hand");
}

TEST_CASE("LineDiff marks removed, added and kept lines", "[docker][daemon_json]") {
  CHECK(docker::LineDiff("a\nb\nc\n", "a\nx\nc\nd\n") == "  a\n- b\n+ x\n  c\n+ d\n");
  CHECK(docker::LineDiff("", "{}\n") == "+ {}\n");
}
