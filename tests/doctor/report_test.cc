// The doctor JSON document (docs/json.md shape: keys, order, types, summary counts), the table, exit codes.
#include "doctor/report.h"

#include <catch2/catch.hpp>

#include "layers/sample.h"

using namespace gp;
using verdict::Status;

namespace {
std::vector<verdict::LayerReport> SomeReports() {
  test::Inputs t;
  t.host.cudnn = {};                     // cudnn fail
  t.host.driver.kernel_headers = false;  // driver warn
  t.stack.image.cuda = {};
  t.stack.image.cuda.unknown = true;  // image skip
  t.stack.image.cuda.reason = "not known";
  return layers::CheckAll(t.in());
}
}  // namespace

TEST_CASE("doctor JSON: top-level keys in docs/json.md order, with their types", "[doctor]") {
  test::Inputs t;
  auto reports = SomeReports();
  auto doc = doctor::ReportJson("ubuntu22-r535-cuda12.2", t.host, reports);
  std::vector<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"gpuprep", "manifest", "host", "layers", "summary"});
  CHECK(doc["gpuprep"] == GPUPREP_VERSION);
  CHECK(doc["manifest"] == "ubuntu22-r535-cuda12.2");
  CHECK(doc["host"].is_object());
  CHECK(doc["host"]["gpus"].size() == 8);
  REQUIRE(doc["layers"].is_array());
  REQUIRE(doc["layers"].size() == 12);  // the stack row and the 11 layers

  for (const auto& l : doc["layers"]) {
    std::vector<std::string> lk;
    for (auto it = l.begin(); it != l.end(); ++it) lk.push_back(it.key());
    CHECK(lk == std::vector<std::string>{"name", "status", "found", "wanted", "detail", "fix", "findings"});
    CHECK(l["name"].is_string());
    std::string status = l["status"];
    CHECK((status == "ok" || status == "warn" || status == "fail" || status == "skip"));
    CHECK((l["found"].is_string() || l["found"].is_null()));
    CHECK(l["wanted"].is_string());
    CHECK(l["detail"].is_string());
    CHECK((l["fix"].is_string() || l["fix"].is_null()));
    // A failing or warning layer always says how to fix it.
    if (status == "fail" || status == "warn") CHECK(l["fix"].is_string());
    for (const auto& f : l["findings"]) {
      CHECK(f["status"].is_string());
      CHECK(f["message"].is_string());
      CHECK(f["code"].is_string());
      CHECK((f["fix"].is_string() || f["fix"].is_null()));
    }
  }
  CHECK(doc["layers"][0]["name"] == "stack");  // the stack row first (a test stack of its own pins: ok)
  const auto& cudnn = doc["layers"][7];
  CHECK(cudnn["name"] == "cudnn");
  CHECK(cudnn["status"] == "fail");
  CHECK(cudnn["found"].is_null());
  CHECK(cudnn["wanted"] == "8.9.7");
  CHECK(cudnn["detail"] == "cuDNN not installed");
  CHECK(cudnn["fix"] == "sudo gpuprep apply --yes --only cudnn");
  CHECK(doc["layers"][4]["status"] == "warn");
  CHECK(doc["layers"][0]["fix"].is_null());

  std::vector<std::string> sk;
  for (auto it = doc["summary"].begin(); it != doc["summary"].end(); ++it) sk.push_back(it.key());
  CHECK(sk == std::vector<std::string>{"ok", "warn", "fail", "skip"});
  CHECK(doc["summary"]["ok"] == 9);
  CHECK(doc["summary"]["warn"] == 1);
  CHECK(doc["summary"]["fail"] == 1);
  CHECK(doc["summary"]["skip"] == 1);
}

TEST_CASE("doctor: exit code 1 exactly when a layer failed", "[doctor]") {
  test::Inputs t;
  auto ok = layers::CheckAll(t.in());
  CHECK(doctor::ExitCodeFor(ok) == 0);
  t.host.driver.kernel_headers = false;  // a warning does not fail
  CHECK(doctor::ExitCodeFor(layers::CheckAll(t.in())) == 0);
  CHECK(doctor::ExitCodeFor(SomeReports()) == 1);
}

TEST_CASE("doctor table: rows, findings with fixes, summary; colour only when asked", "[doctor]") {
  test::Inputs t;
  auto reports = SomeReports();
  std::string plain = doctor::RenderTable(t.stack, t.host, reports, {});
  CHECK(plain.find('\033') == std::string::npos);
  CHECK(plain.rfind(
            "gpuprep doctor: stack ubuntu22-r535-cuda12.2 on Ubuntu 22.04.4 LTS (5.15.0-105-generic)\n", 0) ==
        0);
  CHECK(plain.find("\nLAYER              STATUS  FOUND") != std::string::npos);
  CHECK(plain.find("\ncudnn              fail    -  ") != std::string::npos);
  CHECK(plain.find("\n                           cuDNN not installed\n"
                   "                           fix: sudo gpuprep apply --yes --only cudnn\n") !=
        std::string::npos);
  // ok findings are for --verbose only
  CHECK(plain.find("kernel module and userspace driver agree") == std::string::npos);
  CHECK(plain.size() > 30);
  CHECK(plain.substr(plain.size() - 29) == "9 ok, 1 warn, 1 fail, 1 skip\n");

  std::string colour = doctor::RenderTable(t.stack, t.host, reports, {true, false});
  CHECK(colour.find("\033[1;31mfail\033[0m") != std::string::npos);
  CHECK(colour.find("\033[32mok\033[0m") != std::string::npos);

  t.stack.origins["driver.version"] = "embedded:ubuntu22-r535-cuda12.2:47:3";
  t.host.probe_notes = {"docker: engine not contacted"};
  std::string verbose = doctor::RenderTable(t.stack, t.host, reports, {false, true});
  CHECK(verbose.find("kernel module and userspace driver agree") != std::string::npos);
  CHECK(verbose.find("  driver.version  embedded:ubuntu22-r535-cuda12.2:47:3\n") != std::string::npos);
  CHECK(verbose.find("  cuda    12.2.140 from version.json (/usr/local/cuda-12.2)\n") != std::string::npos);
  CHECK(verbose.find("probe notes:\n  docker: engine not contacted\n") != std::string::npos);
}
