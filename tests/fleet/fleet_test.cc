// fleet-report: snapshots made by doctor on the fixture trees, parsed, grouped by finding code and rendered
// in its four forms; bad snapshots rejected with file:line:col and exit 2.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fleet/model.h"
#include "fleet/render.h"
#include "support/cli.h"
#include "support/temp_dir.h"
#include "util/error.h"

namespace {

std::string Tree(const std::string& name) { return std::string(GP_FIXTURES) + "/hosts/" + name; }

std::string DoctorJson(const std::string& tree) {
  auto r = gp::test::Gpuprep(
      {"doctor", "--json", "--root", Tree(tree), "--manifest", "ubuntu22.04-r535-cuda12.2"});
  REQUIRE((r.code == 0 || r.code == 1));
  return r.out;
}

const gp::fleet::Group* FindGroup(const gp::fleet::Report& r, const std::string& code) {
  for (const auto& g : r.groups)
    if (g.code == code) return &g;
  return nullptr;
}

}  // namespace

TEST_CASE("doctor's findings all carry a stable code named after their layer", "[fleet][codes]") {
  for (const char* tree :
       {"bare-nouveau", "healthy-h100", "mismatch", "nvswitch-no-fm", "blackwell-old-driver", "open-module",
        "v100-new-driver", "secure-boot-unsigned"}) {
    auto doc = nlohmann::json::parse(DoctorJson(tree));
    for (const auto& l : doc["layers"])
      for (const auto& f : l["findings"]) {
        INFO(tree << " " << l["name"] << ": " << f["message"]);
        const std::string code = f["code"];
        CHECK(code.rfind(l["name"].get<std::string>() + ".", 0) == 0);
      }
  }
}

TEST_CASE("doctor --json names the host: hostname, machine-id, GPU ids", "[fleet][identity]") {
  auto doc = nlohmann::json::parse(DoctorJson("healthy-h100"));
  CHECK(doc["host"]["hostname"] == "gpu-node-01");
  CHECK(doc["host"]["machine_id"] == "3f1c2a9e7b5d4c6f8a0b1c2d3e4f5a6b");
  // --root loads no NVML: no UUIDs or serials; the PCI address identifies each GPU.
  CHECK(doc["host"]["gpus"][0]["uuid"].is_null());
  CHECK(doc["host"]["gpus"][0]["serial"].is_null());
  CHECK(doc["host"]["gpus"][0]["pci"] == "0000:18:00.0");
  auto bare = nlohmann::json::parse(DoctorJson("bare-nouveau"));
  CHECK(bare["host"]["hostname"].is_null());  // "bad host name!" is not reported
  CHECK(bare["host"]["machine_id"].is_null());
  // launch --host reads the extended document back
  const gp::test::TempDir t("gpuprep-fleet");
  auto r = gp::test::Gpuprep({"launch", "--host", t.Write("n.json", DoctorJson("healthy-h100")), "--format",
                              "json", "--", "python", "train.py"});
  CHECK(r.code == 0);
}

TEST_CASE("fleet report groups findings by code across hosts, fix once", "[fleet]") {
  std::vector<gp::fleet::Host> hosts;
  for (const char* tree : {"healthy-h100", "mismatch", "bare-nouveau", "nvswitch-no-fm"})
    hosts.push_back(gp::fleet::ParseSnapshot(DoctorJson(tree), std::string(tree) + ".json"));
  auto r = gp::fleet::BuildReport(hosts);
  REQUIRE(r.hosts.size() == 4);
  CHECK(r.hosts[0].label == "gpu-node-01");
  CHECK(r.hosts[1].label == "gpu-node-02");
  CHECK(r.hosts[2].label == "bare-nouveau.json");  // no valid hostname, no machine-id: the file
  CHECK(r.failing >= 2);
  const auto* mm = FindGroup(r, "driver.module-mismatch");
  REQUIRE(mm);
  CHECK(mm->status == "fail");
  CHECK(mm->hosts == std::vector<std::string>{"gpu-node-02"});
  CHECK(mm->fixes == std::vector<std::string>{"sudo reboot"});
  const auto* fm = FindGroup(r, "fabricmanager.missing");
  REQUIRE(fm);
  CHECK(fm->hosts == std::vector<std::string>{"nvswitch-no-fm.json"});
  // fail groups first
  bool seen_warn = false;
  for (const auto& g : r.groups) {
    if (g.status == "warn") seen_warn = true;
    if (g.status == "fail") CHECK_FALSE(seen_warn);
  }
  CHECK(gp::fleet::ExitCodeFor(r) == 1);

  std::string text = gp::fleet::RenderText(r);
  CHECK(text.find("fleet: 4 hosts") == 0);
  CHECK(text.find("FAIL driver.module-mismatch (1 host): gpu-node-02\n") != std::string::npos);
  std::string md = gp::fleet::RenderMarkdown(r);
  CHECK(md.find("| fail | `driver.module-mismatch` | 1: gpu-node-02 |") != std::string::npos);
  auto j = nlohmann::json::parse(gp::fleet::RenderJson(r));
  CHECK(j["summary"]["hosts"] == 4);
  CHECK(j["hosts"][1]["layers"]["driver"] == "fail");
  CHECK(j["hosts"][0]["machine_id"] == "3f1c2a9e7b5d4c6f8a0b1c2d3e4f5a6b");
  std::string html = gp::fleet::RenderHtml(r);
  CHECK(html.find("<tr class=\"host\" data-status=\"fail\" data-label=\"gpu-node-02\"") != std::string::npos);
  CHECK(html.find("data-code=\"driver.module-mismatch\"") != std::string::npos);
  CHECK(html.find("src=") == std::string::npos);  // nothing external
  CHECK(html.find("http://") == std::string::npos);
}

TEST_CASE("fleet report escapes what a snapshot says", "[fleet]") {
  auto doc = nlohmann::json::parse(DoctorJson("mismatch"));
  doc["host"]["hostname"] = nullptr;
  doc["host"]["machine_id"] = nullptr;
  for (auto& l : doc["layers"])
    for (auto& f : l["findings"])
      if (f["status"] == "fail") f["message"] = "<script>alert(1)</script> | \x1b[31mred";
  auto h = gp::fleet::ParseSnapshot(doc.dump(), "<img src=x>.json");
  auto r = gp::fleet::BuildReport({h});
  std::string html = gp::fleet::RenderHtml(r);
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  std::string text = gp::fleet::RenderText(r);
  CHECK(text.find('\x1b') == std::string::npos);
  std::string md = gp::fleet::RenderMarkdown(r);
  CHECK(md.find("\\<script\\>alert\\(1\\)\\</script\\> \\| \\\\e\\[31mred") != std::string::npos);
}

TEST_CASE("fleet-report: bad snapshots are exit 2 with file:line:col", "[fleet][cli]") {
  const gp::test::TempDir t("gpuprep-fleet");
  std::string good = t.Write("good.json", DoctorJson("healthy-h100"));
  std::string broken = t.Write("broken.json", "{\n  \"host\": {,\n}");
  auto r = gp::test::Gpuprep({"fleet-report", good, broken});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("gpuprep: error: " + broken + ":2:12: invalid JSON: ", 0) == 0);

  auto doc = nlohmann::json::parse(DoctorJson("healthy-h100"));
  doc["layers"][2]["status"] = "broken";
  std::string bad_status = t.Write("status.json", doc.dump(2));
  r = gp::test::Gpuprep({"fleet-report", bad_status});
  CHECK(r.code == 2);
  CHECK(r.err.find(bad_status + ":") != std::string::npos);
  CHECK(r.err.find(": layers[2].status: expected ok, warn, fail or skip") != std::string::npos);

  r = gp::test::Gpuprep({"fleet-report", t.Write("plan.json", "{\"steps\": []}")});
  CHECK(r.code == 2);
  CHECK(r.err.find("not a gpuprep doctor --json document") != std::string::npos);

  r = gp::test::Gpuprep({"fleet-report", "--format", "pdf", good});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --format: must be text, markdown, json or html, not \"pdf\"\n");

  r = gp::test::Gpuprep({"fleet-report", t.path + "/missing.json"});
  CHECK(r.code == 2);

  // The snapshot reader's limits hold here too: deep nesting and a number no double holds are one line each.
  const std::string deep = t.Write("deep.json", "{\"host\": " + std::string(100000, '[') + "}");
  r = gp::test::Gpuprep({"fleet-report", deep});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: " + deep + ":1:41: nested deeper than 32 levels\n");
  const std::string huge = t.Write("huge.json", "{\"host\": {\"cpus\": 1e999}, \"layers\": []}");
  r = gp::test::Gpuprep({"fleet-report", huge});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("gpuprep: error: " + huge + ":1:", 0) == 0);
  CHECK(r.err.find("invalid JSON: ") != std::string::npos);
}

TEST_CASE("fleet-report: exit code follows the worst host; -o writes the page", "[fleet][cli]") {
  const gp::test::TempDir t("gpuprep-fleet");
  std::string ok = t.Write("ok.json", DoctorJson("healthy-h100"));
  std::string bad = t.Write("bad.json", DoctorJson("mismatch"));
  auto healthy = nlohmann::json::parse(DoctorJson("healthy-h100"));
  auto r = gp::test::Gpuprep({"fleet-report", "--format", "json", ok});
  CHECK(r.code == (healthy["summary"]["fail"] == 0 ? 0 : 1));
  std::string page = t.path + "/fleet.html";
  r = gp::test::Gpuprep({"fleet-report", "--format", "html", "-o", page, ok, bad});
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  std::ifstream in(page);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("gpu-node-02") != std::string::npos);
}
