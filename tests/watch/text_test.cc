// The text a terminal user reads: a verdict with its evidence and fix, the summary per GPU, including a
// GPU with no verdict (a run shorter than a window, a GPU lost before its first window closed).
#include "watch/text.h"

#include <catch2/catch.hpp>

#include "watch/rules.h"
#include "watch/verdict.h"

using namespace gp;

TEST_CASE("text: a verdict names the GPU, the verdict, the evidence and the fix", "[watch][text]") {
  watch::Verdict v;
  v.gpu = {3, "GPU-x", "0000:3a:00.0"};
  v.kind = watch::VerdictKind::kIdle;
  v.confidence = watch::Confidence::kHigh;
  v.detail = "duty cycle 0%\x1b[31m";
  v.fix = watch::FixFor(v.kind);
  const std::string t = watch::RenderVerdictText(v);
  CHECK(t.find("GPU 3 (0000:3a:00.0)  idle (high confidence)") != std::string::npos);
  CHECK(t.find('\x1b') == std::string::npos);  // terminal escapes from a recording are not passed on
  CHECK(t.find("fix: ") != std::string::npos);
  v.kind = watch::VerdictKind::kHealthy;
  CHECK(watch::RenderVerdictText(v).find("fix: ") == std::string::npos);
  CHECK(watch::RenderVerdictText(v).find("health finding") == std::string::npos);
  v.kind = watch::VerdictKind::kThrottled;
  v.health_codes = {"gpu.clocks-power-brake"};
  CHECK(watch::RenderVerdictText(v).find("\n    health finding: gpu.clocks-power-brake\n") !=
        std::string::npos);
}

TEST_CASE("text: the summary says which GPU got no verdict and which was lost", "[watch][text]") {
  watch::Summary s;
  s.samples = 1;
  s.end_ms = 300;
  s.window_ms = 60000;
  s.interval_ms = 1000;
  s.reason = "the run (300ms) is shorter than one window (1m)";
  s.gpus = {{{0, "GPU-a", "0000:18:00.0"}, "H100", {}, 0},
            {{1, "GPU-b", "0000:29:00.0"}, "H100", {{"idle", 2}}, 1}};
  s.lost_gpus = {{{0, "GPU-a", "0000:18:00.0"}, 200}};
  const std::string t = watch::RenderSummaryText(s);
  CHECK(t.find("summary: 1 sample over 300ms") != std::string::npos);
  CHECK(t.find("not judged: the run (300ms)") != std::string::npos);
  CHECK(t.find("GPU 0 (0000:18:00.0) H100: no verdict, lost\n") != std::string::npos);
  CHECK(t.find("GPU 1 (0000:29:00.0) H100: idle 2, 1 gaps\n") != std::string::npos);
  CHECK(t.find("lost: GPU 0 (0000:18:00.0) GPU-a at 1970-01-01T00:00:00.200Z (gpu.lost)\n") !=
        std::string::npos);
}
