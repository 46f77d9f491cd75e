// The outputs of accept: the table's rows and verdict line, the JSON's keys, and the reports' escaping of
// what a recording says about the server (a hostile serial number or host name).
#include "accept/render.h"

#include <catch2/catch.hpp>
#include <string>

namespace {

gp::accept::Recording Hostile() {
  gp::accept::Recording rec;
  rec.run.host = "<script>alert(1)</script>";
  rec.run.driver_version = "560.35.03";
  rec.run.topology = "nvswitch";
  rec.run.started_at = "2026-12-03T10:00:00Z";
  gp::accept::GpuInfo g;
  g.index = 0;
  g.pci_device_id = "0x2330";
  g.name = "NVIDIA H100 80GB HBM3";
  g.serial = "| *bold* [x](http://e) \x1b[31m";
  g.uuid = "GPU-\"'&";
  rec.gpus.push_back(g);
  return rec;
}

gp::accept::Result OneCheck(gp::accept::Status s) {
  gp::accept::Result r;
  gp::accept::Check c;
  c.group = "compute";
  c.name = "matmul_bf16";
  c.gpu = 0;
  c.measured = 9000;
  c.unit = "TFLOP/s";
  gp::accept::Value peak;
  peak.value = 989;
  peak.unit = "TFLOP/s";
  peak.kind = "quoted";
  peak.source = "o/r@c:f:1";
  c.peak = peak;
  c.status = s;
  c.reason = "above the physical peak";
  r.checks.push_back(c);
  r.failed = s == gp::accept::Status::kInvalid ? 1 : 0;
  r.verdict = r.failed ? "fail" : "pass";
  return r;
}

}  // namespace

TEST_CASE("accept render: table, JSON and verdict line", "[accept]") {
  auto rec = Hostile();
  auto r = OneCheck(gp::accept::Status::kInvalid);
  auto table = gp::accept::RenderTable(rec, r, false);
  CHECK(table.find("invalid-measurement") != std::string::npos);
  CHECK(table.find("above the physical peak") != std::string::npos);
  CHECK(table.find('\x1b') == std::string::npos);
  CHECK(gp::accept::VerdictLine(r).find("verdict: fail") == 0);
  auto j = gp::accept::ReportJson(rec, r);
  CHECK(j["verdict"] == "fail");
  CHECK(j["checks"][0]["status"] == "invalid-measurement");
  CHECK(j["checks"][0]["peak"]["source"] == "o/r@c:f:1");
  CHECK(j["server"]["gpus"][0]["serial"] == rec.gpus[0].serial);  // JSON keeps the text (it is escaped there)
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"gpuprep", "verdict", "server", "checks", "summary"});
}

TEST_CASE("accept render: the reports escape the recording's text", "[accept]") {
  auto rec = Hostile();
  auto r = OneCheck(gp::accept::Status::kInvalid);
  auto html = gp::accept::RenderHtml(rec, r, "2026-12-03T10:05:00Z");
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("GPU-&quot;&#39;&amp;") != std::string::npos);
  CHECK(html.find('\x1b') == std::string::npos);
  CHECK(html.find("Content-Security-Policy") != std::string::npos);
  auto md = gp::accept::RenderMarkdown(rec, r, "2026-12-03T10:05:00Z");
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("\\| \\*bold\\* \\[x\\]") != std::string::npos);
  CHECK(md.find('\x1b') == std::string::npos);
  CHECK(md.find("2026-12-03T10:05:00Z") != std::string::npos);
  CHECK(md.find("o/r@c:f:1") != std::string::npos);
}
