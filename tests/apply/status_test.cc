// /var/lib/gpuprep/status.json: per-layer verdicts from the plan and the journal, the document's keys,
// and the --callback URL rules (https, or http to a literal loopback address; no user info).
#include "apply/status.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using gp::apply::CallbackUrlProblem;
using gp::plan::LayerDecision;

namespace {

gp::plan::Plan TwoLayerPlan() {
  gp::plan::Plan p;
  p.stack = "s";
  p.layers = {{"os", LayerDecision::Kind::kNone, "", "", ""},
              {"driver", LayerDecision::Kind::kInstall, "", "535.129.03", "missing: cuda-drivers"},
              {"cudnn", LayerDecision::Kind::kInstall, "", "8.9.7", "missing: libcudnn8"},
              {"image", LayerDecision::Kind::kSkipped, "", "", "--skip"}};
  p.steps = {{"apt.install", {"driver", "cudnn"}, "install", {}}, {"verify.cudnn", {"cudnn"}, "verify", {}}};
  return p;
}

std::string VerdictOf(const std::vector<gp::apply::LayerVerdict>& v, const std::string& layer) {
  for (const auto& l : v)
    if (l.name == layer) return l.verdict;
  return "(none)";
}

}  // namespace

TEST_CASE("status: per-layer verdicts follow the journal", "[apply][status]") {
  auto plan = TwoLayerPlan();
  gp::apply::Journal j;
  SECTION("all steps done") {
    j.steps = {{"apt.install", {"driver", "cudnn"}, "done", "t", ""},
               {"verify.cudnn", {"cudnn"}, "done", "t", ""}};
    auto v = gp::apply::LayerVerdicts(plan, j, 0);
    CHECK(VerdictOf(v, "os") == "ok");
    CHECK(VerdictOf(v, "driver") == "installed");
    CHECK(VerdictOf(v, "cudnn") == "installed");
    CHECK(VerdictOf(v, "image") == "skipped");
  }
  SECTION("a failed verify fails only its layer; an unreached step is pending") {
    j.steps = {{"apt.install", {"driver", "cudnn"}, "done", "t", ""},
               {"verify.cudnn", {"cudnn"}, "failed", "t", "x"}};
    auto v = gp::apply::LayerVerdicts(plan, j, 1);
    CHECK(VerdictOf(v, "driver") == "installed");
    CHECK(VerdictOf(v, "cudnn") == "failed");
    j.steps = {{"apt.install", {"driver", "cudnn"}, "failed", "t", "apt"}};
    v = gp::apply::LayerVerdicts(plan, j, 1);
    CHECK(VerdictOf(v, "driver") == "failed");
    CHECK(VerdictOf(v, "cudnn") == "failed");
    j.steps = {};
    CHECK(VerdictOf(gp::apply::LayerVerdicts(plan, j, 1), "driver") == "pending");
  }
  SECTION("exit 3: installed layers wait for the reboot") {
    plan.layers[1].kind = LayerDecision::Kind::kReboot;
    j.steps = {{"apt.install", {"driver", "cudnn"}, "done", "t", ""}};
    auto v = gp::apply::LayerVerdicts(plan, j, 3);
    CHECK(VerdictOf(v, "driver") == "reboot-required");
    CHECK(VerdictOf(v, "cudnn") == "reboot-required");  // installed; its verify step waits for the boot
    j.steps = {};
    CHECK(VerdictOf(gp::apply::LayerVerdicts(plan, j, 3), "cudnn") == "pending");
  }
}

TEST_CASE("status: the document", "[apply][status]") {
  gp::apply::RunStatus s;
  s.stack = "hopper-r580-cuda13.0";
  s.manifest = "/etc/gpuprep/site.yaml";
  s.state = "reboot-required";
  s.exit_code = 3;
  s.message = "a reboot is required";
  s.started = "2026-11-30T10:00:00Z";
  s.finished = "2026-11-30T10:05:00Z";
  s.layers = {{"driver", "reboot-required", "missing: cuda-drivers"}};
  auto doc = nlohmann::json::parse(gp::apply::StatusToText(s));
  CHECK(doc["stack"] == "hopper-r580-cuda13.0");
  CHECK(doc["state"] == "reboot-required");
  CHECK(doc["exit_code"] == 3);
  CHECK(doc["started"] == "2026-11-30T10:00:00Z");
  CHECK(doc["finished"] == "2026-11-30T10:05:00Z");
  CHECK(doc["layers"][0] == nlohmann::json{{"name", "driver"},
                                           {"verdict", "reboot-required"},
                                           {"detail", "missing: cuda-drivers"}});
  CHECK(doc["gpuprep"] == GPUPREP_VERSION);
}

TEST_CASE("status: --callback URLs", "[apply][status]") {
  CHECK(CallbackUrlProblem("https://ops.example.com/gpuprep/hook?id=7") == "");
  CHECK(CallbackUrlProblem("http://127.0.0.1:8080/hook") == "");
  CHECK(CallbackUrlProblem("http://[::1]:8080/hook") == "");
  CHECK(CallbackUrlProblem("http://ops.example.com/hook").find("plain http is only for a literal loopback") ==
        0);
  CHECK(CallbackUrlProblem("http://127.0.0.1.evil.example/hook").find("plain http") == 0);
  CHECK(CallbackUrlProblem("http://localhost/hook").find("plain http") == 0);
  CHECK(CallbackUrlProblem("https://user:pw@ops.example.com/") == "must not carry user info");
  CHECK(CallbackUrlProblem("ftp://ops.example.com/") == "must be an https:// URL");
  CHECK(CallbackUrlProblem("https://ops.example.com/a b") == "contains a blank or control character");
  CHECK(CallbackUrlProblem("https:///x") == "has no host");
  CHECK(CallbackUrlProblem("https://a/" + std::string(2100, 'x')) == "longer than 2048 bytes");
  auto c = gp::apply::CallbackCommand("https://ops.example.com/hook", "{}");
  CHECK(c.argv.front() == "curl");
  CHECK(c.argv.back() == "https://ops.example.com/hook");
  CHECK(c.argv[c.argv.size() - 2] == "--url");
  CHECK(c.stdin_data == std::optional<std::string>("{}"));
}

TEST_CASE("status: the converged stack and the run's content hash", "[apply][status]") {
  gp::apply::RunStatus s;
  s.stack = "hopper-r580-cuda13.0";
  s.manifest = "hopper-r580-cuda13.0";
  s.content_hash = "sha256:" + std::string(64, 'a');
  s.state = "failed";
  auto doc = nlohmann::json::parse(gp::apply::StatusToText(s));
  CHECK(doc["content_hash"] == s.content_hash);
  CHECK(doc["converged"].is_null());
  s.converged =
      gp::apply::StackRecord{"old", "/etc/gpuprep/site.yaml", "sha256:" + std::string(64, 'b'), "T"};
  doc = nlohmann::json::parse(gp::apply::StatusToText(s));
  CHECK(doc["converged"] == nlohmann::json{{"stack", "old"},
                                           {"manifest", "/etc/gpuprep/site.yaml"},
                                           {"content_hash", "sha256:" + std::string(64, 'b')},
                                           {"finished", "T"}});
}

TEST_CASE("status: which recorded stack is the host's", "[apply][status]") {
  using gp::apply::HostStackOf;
  gp::apply::StatusRecords r;
  r.last = {"new", "new", "", ""};
  CHECK(HostStackOf(r)->record.stack == "new");  // never converged: the last run's stack
  CHECK_FALSE(HostStackOf(r)->converged);
  r.converged = gp::apply::StackRecord{"old", "old", "", "T"};
  for (const char* state : {"done", "nothing-to-do", "refused"}) {
    INFO(state);
    r.state = state;
    CHECK(HostStackOf(r)->record.stack == "old");
    CHECK(HostStackOf(r)->converged);
  }
  for (const char* state : {"reboot-required", "failed"}) {  // a move under way: finish it
    INFO(state);
    r.state = state;
    CHECK(HostStackOf(r)->record.stack == "new");
  }
  r.last = {"old", "old", "", ""};  // a failed re-apply of the same stack
  r.state = "failed";
  CHECK(HostStackOf(r)->converged);
  CHECK_FALSE(HostStackOf(gp::apply::StatusRecords{}));
}
