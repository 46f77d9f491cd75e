// The node_exporter textfile: label values escaped per the exposition format, dcgm-exporter's labels,
// ratios 0-1, counters that only grow, gpuprep_watch_up 0 on the final write, no client timestamps; every
// name gpuprep_watch_*; doctor's health codes of a lost or hardware-throttled GPU.
#include "watch/prom.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "util/input.h"

using namespace gp;

TEST_CASE("prom: label values are escaped and one line", "[watch][prom]") {
  CHECK(PrometheusLabelValue("a\"b\\c") == "a\\\"b\\\\c");
  const std::string v = PrometheusLabelValue("x\ny\x1b[31m\xff");
  CHECK(v.find('\n') == std::string::npos);
  CHECK(v.find('\x1b') == std::string::npos);
  CHECK(v.find('\xff') == std::string::npos);
  // A bidi override is escaped like a control character; the escape's backslashes are escaped in turn, so
  // the label stays valid in the exposition format and reads back as the escape.
  CHECK(PrometheusLabelValue("H100\xe2\x80\xae"
                             "x") == "H100\\\\xE2\\\\x80\\\\xAEx");
}

TEST_CASE("prom: one file per window with the GPU labels, up 0 at the end", "[watch][prom]") {
  watch::PromState p;
  p.SetGpus(
      {{{0, "GPU-a", "00000000:18:00.0"}, "NVIDIA \"H100\""}, {{1, "GPU-b", "00000000:29:00.0"}, "H100"}});
  CHECK(p.Render(true).find("gpuprep_watch_up 1\n") != std::string::npos);
  watch::Verdict v;
  v.gpu = {0, "GPU-a", "00000000:18:00.0"};
  v.kind = watch::VerdictKind::kIdle;
  v.start_ms = 0;
  v.end_ms = 60000;
  v.evidence = {{"duty_mean_pct", 25.0}, {"sm_active_ratio", 0.5}, {"power_mean_w", nullptr}};
  p.Add({v}, 60000);
  p.Add({v}, 60000);
  const std::string t = p.Render(false);
  CHECK(t.find("gpuprep_watch_up 0\n") != std::string::npos);
  const std::string labels =
      "{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:18:00.0\",modelName=\"NVIDIA \\\"H100\\\"\"";
  CHECK(t.find("gpuprep_watch_verdict" + labels + ",verdict=\"idle\"} 1\n") != std::string::npos);
  CHECK(t.find("gpuprep_watch_verdict" + labels + ",verdict=\"healthy\"} 0\n") != std::string::npos);
  CHECK(t.find("gpuprep_watch_verdict_windows_total" + labels + ",verdict=\"idle\"} 2\n") !=
        std::string::npos);
  CHECK(t.find("gpuprep_watch_verdict_seconds_total" + labels + ",verdict=\"idle\"} 120\n") !=
        std::string::npos);
  CHECK(t.find("gpuprep_watch_gpu_duty_cycle_ratio" + labels + "} 0.25\n") != std::string::npos);
  CHECK(t.find("gpuprep_watch_gpu_power_watts") == std::string::npos);  // null evidence: no sample
  CHECK(t.find("gpuprep_watch_gpu_health") == std::string::npos);       // no health finding: no family
  CHECK(t.find("gpuprep_watch_last_window_end_timestamp_seconds 60\n") != std::string::npos);
  // Every sample line: a name, optional labels, one value; no timestamp.
  std::istringstream in(t);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) == 0) continue;
    const std::string value = line.substr(line.rfind(' ') + 1);
    // Every name is watch's own: doctor --health's textfile has gpuprep_health_*, node_exporter reads both.
    CHECK(line.rfind("gpuprep_watch_", 0) == 0);
    const bool one_value = line.find('}') == std::string::npos ? line.find(' ') == line.rfind(' ')
                                                               : line.rfind(' ') == line.rfind('}') + 1;
    CHECK(one_value);
    CHECK(value.find_first_not_of("0123456789.e+-") == std::string::npos);
  }
}

TEST_CASE("prom: a lost or hardware-throttled GPU carries doctor's code in gpuprep_watch_gpu_health",
          "[watch][prom]") {
  watch::PromState p;
  const watch::GpuId a{0, "GPU-a", "00000000:18:00.0"}, b{1, "GPU-b", "00000000:29:00.0"};
  p.SetGpus({{a, "H100"}, {b, "H100"}});
  const std::string la = "{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:18:00.0\",modelName=\"H100\"";
  const std::string lb = "{gpu=\"1\",UUID=\"GPU-b\",pci_bus_id=\"00000000:29:00.0\",modelName=\"H100\"";
  watch::Verdict braked;
  braked.gpu = a;
  braked.kind = watch::VerdictKind::kThrottled;
  braked.reasons = {"hw_slowdown", "hw_power_brake_slowdown"};
  braked.health_codes = watch::HealthCodesOf(braked.reasons);
  watch::Verdict fine;
  fine.gpu = b;
  p.Add({braked, fine}, 60000);
  std::string t = p.Render(true);
  CHECK(t.find("# TYPE gpuprep_watch_gpu_health gauge\n") != std::string::npos);
  CHECK(t.find("gpuprep_watch_gpu_health" + la + ",code=\"gpu.clocks-power-brake\"} 1\n") !=
        std::string::npos);
  CHECK(t.find("gpuprep_watch_gpu_health" + lb) == std::string::npos);  // no finding: no series
  CHECK(t.find("code=\"gpu.clocks-hw-slowdown\"") == std::string::npos);
  // The next window is healthy: the series stays, at 0 (an alert resolves, the history stays readable).
  braked.kind = watch::VerdictKind::kHealthy;
  braked.reasons.clear();
  braked.health_codes.clear();
  p.Add({braked, fine}, 60000);
  // GPU 1 falls off the bus: its code at once, before any window closes, and to the end.
  CHECK(p.MarkLost(b));
  CHECK_FALSE(p.MarkLost(b));  // said once: the caller rewrites the file only the first time
  t = p.Render(false);
  CHECK(t.find("gpuprep_watch_gpu_health" + la + ",code=\"gpu.clocks-power-brake\"} 0\n") !=
        std::string::npos);
  CHECK(t.find("gpuprep_watch_gpu_health" + lb + ",code=\"gpu.lost\"} 1\n") != std::string::npos);
  CHECK(t.find("# HELP gpuprep_watch_gpu_health") != std::string::npos);
}
