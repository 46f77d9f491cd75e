// The verdict rules over hand-built windows: each verdict where its signature is, and none where a
// naive reading would give it (the SW power cap at the limit, the idle bit, a one-sample HW slowdown,
// GPU-Util 100 % while ranks spin).
#include "watch/rules.h"

#include <catch2/catch.hpp>

#include "watch/synthetic.h"

using namespace gp;
using watch::VerdictKind;

namespace {

std::vector<watch::Verdict> Judge(const std::vector<watch::Sample>& w, const watch::Thresholds& t = {}) {
  return watch::JudgeWindow(w, w.front().time_ms, w.front().time_ms + 60000, t);
}

VerdictKind Only(const std::vector<watch::Verdict>& v, unsigned gpu) {
  std::vector<VerdictKind> out;
  for (const auto& x : v)
    if (x.gpu.index == gpu) out.push_back(x.kind);
  REQUIRE(out.size() == 1);
  return out[0];
}

void Loaders(watch::HostSample& h, unsigned gpu, int count, double cpu, char state, unsigned allowed) {
  for (int k = 0; k < count; ++k) {
    watch::HostProcess w;
    w.pid = 5000 + 10 * gpu + static_cast<unsigned>(k);
    w.ppid = 1000 + gpu;
    w.comm = "pt_data_worker";
    w.role = watch::ProcessRole::kLoader;
    w.gpus = {gpu};
    w.state = state;
    w.cpu_pct = cpu;
    w.cpus_allowed = allowed;
    h.processes.push_back(w);
  }
}

}  // namespace

TEST_CASE("rules: healthy at the power cap is not throttled; SM activity must agree", "[watch][rules]") {
  auto v = Judge(test::Window(2, 10, nullptr));
  CHECK(Only(v, 0) == VerdictKind::kHealthy);
  CHECK(v[0].confidence == watch::Confidence::kHigh);
  CHECK(v[0].evidence["gpu_util_ge_90_ratio"] == 1.0);
  // GPU-Util 100 % but SM activity 0.6: neither healthy nor under 0.5: no false verdict, "unclassified"
  // with the rule that came closest and the condition it failed, with its numbers.
  auto mid =
      Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) { g.gpm->sm_active_ratio = 0.6; }));
  REQUIRE(mid.size() == 1);
  CHECK(watch::VerdictName(mid[0].kind) == std::string("unclassified"));
  CHECK(mid[0].evidence["closest_rule"] == "healthy");
  REQUIRE(mid[0].evidence["failed_conditions"].size() == 1);
  CHECK(mid[0].evidence["failed_conditions"][0]["name"] == "sm_active_ratio");
  CHECK(mid[0].evidence["failed_conditions"][0]["value"] == 0.6);
  CHECK(mid[0].evidence["failed_conditions"][0]["op"] == ">=");
  CHECK(mid[0].evidence["failed_conditions"][0]["threshold"] == 0.8);
  CHECK(mid[0].detail.find("closest rule healthy") != std::string::npos);
}

TEST_CASE("rules: healthy without GPM needs duty >= 90 % and power >= 70 %, confidence low",
          "[watch][rules]") {
  auto shape = [](double power) {
    return [power](watch::GpuSample& g, int, unsigned) {
      g.gpm.reset();
      g.power_w = power;
      g.clock_event_reasons = 0;  // below its limit: no SW power cap
    };
  };
  auto v = Judge(test::Window(1, 10, shape(500)));
  CHECK(Only(v, 0) == VerdictKind::kHealthy);
  CHECK(v[0].confidence == watch::Confidence::kLow);
  auto low = Judge(test::Window(1, 10, shape(480)));  // 68.6 %: below the 70 % mark
  REQUIRE(low.size() == 1);
  CHECK(watch::VerdictName(low[0].kind) == std::string("unclassified"));
  CHECK(low[0].confidence == watch::Confidence::kLow);
  CHECK(low[0].evidence["closest_rule"] == "healthy");
  CHECK(low[0].evidence["failed_conditions"][0]["name"] == "power_ratio");
  CHECK(low[0].evidence["failed_conditions"][0]["threshold_name"] == "healthy_power_ratio");
}

TEST_CASE("rules: idle and idle_memory_held", "[watch][rules]") {
  auto idle = [](watch::GpuSample& g, int, unsigned) {
    g.duty_pct = 0;
    g.duty_samples = 0;
    g.duty_buffer_empty = true;
    g.power_w = 70;
    g.clock_event_reasons = 0x1;  // the idle bit is not a throttle reason
    g.gpm = watch::Gpm{0, 0, 0, 0};
    g.processes = std::vector<watch::GpuProcess>{};
    g.memory_used_bytes = 0;
  };
  auto v = Judge(test::Window(1, 10, idle));
  CHECK(Only(v, 0) == VerdictKind::kIdle);
  auto held = Judge(test::Window(1, 10, [&](watch::GpuSample& g, int i, unsigned u) {
    idle(g, i, u);
    g.processes = std::vector<watch::GpuProcess>{{4321, 60ull << 30, std::nullopt}};
  }));
  CHECK(Only(held, 0) == VerdictKind::kIdleMemoryHeld);
  CHECK(held[0].evidence["pids"] == std::vector<unsigned>{4321});
  // Memory used with no process listed (another container's, or no permission) is held memory too.
  auto unlisted = Judge(test::Window(1, 10, [&](watch::GpuSample& g, int i, unsigned u) {
    idle(g, i, u);
    g.memory_used_bytes = 2ull << 30;
  }));
  CHECK(Only(unlisted, 0) == VerdictKind::kIdleMemoryHeld);
}

TEST_CASE("rules: input-bound needs duty gaps and saturated or blocked loaders", "[watch][rules]") {
  auto gaps = [](watch::GpuSample& g, int, unsigned) {
    g.duty_pct = 60;
    g.duty_samples = 5;
    g.duty_zero_samples = 2;  // 40 % of samples at 0
    g.power_w = 250;
    g.clock_event_reasons = 0;
    g.gpm->sm_active_ratio = 0.3;
    g.gpm->tensor_active_ratio = 0.1;
  };
  SECTION("four loaders at 98 % each on 4 allowed CPUs: saturated") {
    auto v =
        Judge(test::Window(1, 10, gaps, [](watch::HostSample& h, int) { Loaders(h, 0, 4, 98, 'R', 4); }));
    CHECK(Only(v, 0) == VerdictKind::kInputBound);
    CHECK(v[0].confidence == watch::Confidence::kHigh);
    CHECK(v[0].evidence["loaders"] == 4);
  }
  SECTION("loaders in D state: blocked on I/O") {
    auto v =
        Judge(test::Window(1, 10, gaps, [](watch::HostSample& h, int) { Loaders(h, 0, 4, 20, 'D', 16); }));
    CHECK(Only(v, 0) == VerdictKind::kInputBound);
    CHECK(v[0].detail.find("blocked on I/O") != std::string::npos);
  }
  SECTION("PSI cpu some >= 20 % while loaders are runnable") {
    auto v = Judge(test::Window(1, 10, gaps, [](watch::HostSample& h, int) {
      Loaders(h, 0, 4, 50, 'R', 16);
      h.pressure->cpu_some_avg10 = 25;
    }));
    CHECK(Only(v, 0) == VerdictKind::kInputBound);
  }
  SECTION("loaders with CPU to spare: not input-bound") {
    auto v =
        Judge(test::Window(1, 10, gaps, [](watch::HostSample& h, int) { Loaders(h, 0, 4, 30, 'S', 16); }));
    for (const auto& x : v) CHECK(x.kind != VerdictKind::kInputBound);
  }
  SECTION("saturated in only half the window: not sustained") {
    auto v = Judge(test::Window(
        1, 10, gaps, [](watch::HostSample& h, int i) { Loaders(h, 0, 4, i < 5 ? 99 : 20, 'S', 4); }));
    for (const auto& x : v) CHECK(x.kind != VerdictKind::kInputBound);
  }
  SECTION("no loaders, the main thread at a full core: loading in the main process") {
    auto v = Judge(test::Window(1, 10, gaps,
                                [](watch::HostSample& h, int) { h.processes[0].main_thread_cpu_pct = 99; }));
    CHECK(Only(v, 0) == VerdictKind::kInputBound);
    CHECK(v[0].detail.find("main thread") != std::string::npos);
  }
  SECTION("processes in another pid namespace: the host's CPUs, confidence low") {
    auto v = Judge(test::Window(1, 10, gaps, [](watch::HostSample& h, int) {
      h.processes.clear();
      h.unattributed_pids = {1000};
      h.cpu_busy_pct.assign(16, 97.0);
    }));
    CHECK(Only(v, 0) == VerdictKind::kInputBound);
    CHECK(v[0].confidence == watch::Confidence::kLow);
    CHECK(v[0].evidence["host_attributable"] == false);
  }
}

TEST_CASE("rules: launch-bound or small batch", "[watch][rules]") {
  auto small = [](watch::GpuSample& g, int, unsigned) {
    g.power_w = 240;
    g.clock_event_reasons = 0;
    g.gpm = watch::Gpm{0.3, 0.12, 0.08, 0.14};
    g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = 0;
  };
  auto v = Judge(test::Window(1, 10, small));
  CHECK(Only(v, 0) == VerdictKind::kLaunchOrSmallBatch);
  // Power at 55 %: not "far below" the limit: unclassified, closest to this rule (one condition failed,
  // as for healthy, whose SM activity 0.3 is further from its 0.8 than power 0.55 is from 0.5).
  auto near = Judge(test::Window(1, 10, [&](watch::GpuSample& g, int i, unsigned u) {
    small(g, i, u);
    g.power_w = 385;
  }));
  REQUIRE(near.size() == 1);
  CHECK(watch::VerdictName(near[0].kind) == std::string("unclassified"));
  CHECK(near[0].evidence["closest_rule"] == "launch_or_small_batch");
  REQUIRE(near[0].evidence["failed_conditions"].size() == 1);
  CHECK(near[0].evidence["failed_conditions"][0]["name"] == "power_ratio");
  CHECK(near[0].evidence["failed_conditions"][0]["op"] == "<");
  CHECK(near[0].evidence["failed_conditions"][0]["value"] == 0.55);
}

TEST_CASE("rules: communication-bound needs high traffic in phase across GPUs", "[watch][rules]") {
  auto comm = [](watch::GpuSample& g, int i, unsigned) {
    g.power_w = 420;
    g.clock_event_reasons = 0;
    g.gpm = watch::Gpm{0.35, 0.15, 0.1, 0.3};
    g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = (i % 2 ? 2.4e11 : 1.6e11);
  };
  auto v = Judge(test::Window(4, 10, comm));
  for (unsigned g = 0; g < 4; ++g) CHECK(Only(v, g) == VerdictKind::kCommunicationBound);
  CHECK(v[0].evidence["in_phase_correlation"] == 1.0);
  // Out of phase: GPU 1's traffic peaks when the others' dips.
  auto out = Judge(test::Window(2, 10, [&](watch::GpuSample& g, int i, unsigned u) {
    comm(g, i, u);
    if (u == 1) g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = (i % 2 ? 1.6e11 : 2.4e11);
  }));
  for (const auto& x : out) CHECK(x.kind != VerdictKind::kCommunicationBound);
}

namespace {

// A data-parallel step in two phases, in phase on every GPU: compute (tensor cores busy, the link nearly
// idle), then an all-reduce (tensor cores idle, NVLink at about a third of its peak). `mean_tensor` is the
// window's mean tensor activity: the compute phase holds 2 x mean - 0.01.
std::function<void(watch::GpuSample&, int, unsigned)> Phases(double mean_tensor) {
  return [mean_tensor](watch::GpuSample& g, int i, unsigned) {
    const double peak = *g.nvlink_peak_bytes_per_s;
    g.power_w = 450;
    g.clock_event_reasons = 0;
    if (i % 2 == 0) {  // compute
      g.gpm = watch::Gpm{0.85, 0.4, 2 * mean_tensor - 0.01, 0.5};
      g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = 0.02 * peak;
    } else {  // all-reduce
      g.gpm = watch::Gpm{0.2, 0.1, 0.01, 0.2};
      g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = 0.36 * peak;
    }
  };
}

}  // namespace

TEST_CASE("rules: a phase-alternating step is communication-bound whatever its mean tensor activity",
          "[watch][rules][phases]") {
  for (double mean : {0.15, 0.23, 0.35}) {
    CAPTURE(mean);
    auto v = Judge(test::Window(8, 10, Phases(mean)));
    for (unsigned g = 0; g < 8; ++g) CHECK(Only(v, g) == VerdictKind::kCommunicationBound);
    REQUIRE_FALSE(v.empty());
    const auto& e = v[0].evidence;
    CHECK(e["phase_split"]["high_traffic_samples"] == 5);
    CHECK(e["phase_split"]["low_traffic_samples"] == 5);
    CHECK(e["phase_split"]["tensor_active_high_traffic"] == 0.01);
    CHECK(e["phase_split"]["tensor_active_low_traffic"].get<double>() == Approx(2 * mean - 0.01));
    CHECK(e["phase_split"]["traffic_peak_ratio_high_traffic"].get<double>() == Approx(0.36));
    CHECK(e["in_phase_correlation"] == 1.0);
    CHECK(e["traffic_link"] == "nvlink");
    CHECK(e["traffic_peak_source"] == "nvml_links_present");  // a sample that does not say: fields 90 x 91
  }
}

TEST_CASE("rules: communication overlapped with compute is not communication-bound",
          "[watch][rules][phases]") {
  // The same traffic, but the tensor cores stay busy while the link is: the all-reduce hides behind compute.
  auto overlapped = [](watch::GpuSample& g, int i, unsigned u) {
    Phases(0.23)(g, i, u);
    g.gpm = watch::Gpm{0.85, 0.4, 0.45, 0.5};
  };
  for (const auto& x : Judge(test::Window(8, 10, overlapped)))
    CHECK(x.kind != VerdictKind::kCommunicationBound);
  // SM activity high in the traffic phase (FP32 math, no tensor cores): not waiting on the link either.
  auto fp32 = [](watch::GpuSample& g, int i, unsigned u) {
    Phases(0.23)(g, i, u);
    g.gpm = watch::Gpm{0.85, 0.4, 0.0, 0.5};
  };
  for (const auto& x : Judge(test::Window(8, 10, fp32))) CHECK(x.kind != VerdictKind::kCommunicationBound);
}

TEST_CASE("rules: hung collective names the straggler; GPU-Util 100 % is no proof of work",
          "[watch][rules]") {
  auto v = Judge(test::Window(4, 10, [](watch::GpuSample& g, int, unsigned u) {
    g.power_w = 120;
    g.nvlink_tx_bytes_per_s = g.nvlink_rx_bytes_per_s = 0;
    g.gpm = watch::Gpm{0.09, 0.03, 0.0, 0.01};
    if (u == 2) {
      g.duty_pct = 0;
      g.duty_buffer_empty = true;
      g.duty_samples = 0;
      g.power_w = 90;
      g.gpm = watch::Gpm{0, 0, 0, 0};
    }
  }));
  for (unsigned g = 0; g < 4; ++g) {
    CHECK(Only(v, g) == VerdictKind::kHungCollective);
  }
  for (const auto& x : v) {
    REQUIRE(x.straggler_gpu);
    CHECK(x.straggler_gpu->index == 2);
  }
  // One GPU alone spinning is not a group: a single-GPU job at low power is not called hung.
  auto one = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.power_w = 120;
    g.gpm = watch::Gpm{0.09, 0.03, 0.0, 0.01};
  }));
  for (const auto& x : one) CHECK(x.kind != VerdictKind::kHungCollective);
}

TEST_CASE("rules: throttled only for actionable reasons, sustained", "[watch][rules]") {
  auto with = [](uint64_t bits, int every) {
    return [bits, every](watch::GpuSample& g, int i, unsigned) {
      if (i % every == 0) g.clock_event_reasons = bits | 0x4;
    };
  };
  auto brake = Judge(test::Window(1, 10, with(0x88, 1)));
  CHECK(Only(brake, 0) == VerdictKind::kThrottled);
  CHECK(brake[0].reasons == std::vector<std::string>{"hw_slowdown", "hw_power_brake_slowdown"});
  // doctor's code for the brake, once: the HW slowdown bit it raises too is named by its cause.
  CHECK(brake[0].health_codes == std::vector<std::string>{"gpu.clocks-power-brake"});
  // HW slowdown "may be also reported during PState or clock change" (nvml.h): once in ten is no verdict.
  CHECK(Only(Judge(test::Window(1, 10, with(0x8, 10))), 0) == VerdictKind::kHealthy);
  // Thermal from the nanosecond counter alone.
  auto thermal =
      Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) { g.hw_thermal_ratio = 0.8; }));
  CHECK(Only(thermal, 0) == VerdictKind::kThrottled);
  CHECK(thermal[0].confidence == watch::Confidence::kHigh);
  CHECK(thermal[0].health_codes == std::vector<std::string>{"gpu.clocks-thermal"});
  // A HW slowdown with no brake or heat behind it.
  auto slowdown = Judge(test::Window(1, 10, with(0x8, 1)));
  CHECK(Only(slowdown, 0) == VerdictKind::kThrottled);
  CHECK(slowdown[0].health_codes == std::vector<std::string>{"gpu.clocks-hw-slowdown"});
  // An enforced limit below the default.
  auto capped = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.power_limit_enforced_w = 500;
    g.power_w = 495;
  }));
  CHECK(Only(capped, 0) == VerdictKind::kThrottled);
  CHECK(capped[0].reasons == std::vector<std::string>{"power_limit_below_default"});
  CHECK(capped[0].health_codes.empty());  // a setting, not hardware trouble
  // SW power cap while drawing far under the limit (an out-of-band cap).
  auto oob = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) { g.power_w = 420; }));
  CHECK(Only(oob, 0) == VerdictKind::kThrottled);
  CHECK(oob[0].reasons == std::vector<std::string>{"sw_power_cap_below_limit"});
  CHECK(oob[0].health_codes.empty());
}

TEST_CASE("rules: gaps and MIG without GPM are activity_unknown; a lost GPU gets nothing", "[watch][rules]") {
  auto gaps = Judge(test::Window(1, 10, [](watch::GpuSample& g, int i, unsigned) {
    if (i < 6) g = watch::GpuSample{g.id, g.name, watch::GpuState::kGap};
  }));
  CHECK(Only(gaps, 0) == VerdictKind::kActivityUnknown);
  auto mig = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.mig_mode = true;
    g.duty_pct.reset();
    g.gpm.reset();
  }));
  CHECK(Only(mig, 0) == VerdictKind::kActivityUnknown);
  auto mig_gpm = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.mig_mode = true;
    g.duty_pct.reset();
    g.gpm.reset();
    g.mig_instances = {{1, watch::Gpm{0.9, 0.4, 0.5, 0.4}}, {2, watch::Gpm{0.0, 0, 0, 0}}};
    g.processes = std::vector<watch::GpuProcess>{{77, 1ull << 30, 1u}};
  }));
  REQUIRE(mig_gpm.size() == 2);
  CHECK(mig_gpm[0].gpu_instance_id == 1u);
  CHECK(mig_gpm[0].kind == VerdictKind::kHealthy);
  CHECK(mig_gpm[1].kind == VerdictKind::kIdle);
  // GPM reaches instance 1 only: instance 2's activity is unknown, said for that instance.
  auto mig_partial = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.mig_mode = true;
    g.duty_pct.reset();
    g.gpm.reset();
    g.mig_instances = {{1, watch::Gpm{0.9, 0.4, 0.5, 0.4}}, {2, watch::Gpm{}}};
  }));
  REQUIRE(mig_partial.size() == 2);
  CHECK(mig_partial[0].kind == VerdictKind::kHealthy);
  CHECK(mig_partial[1].gpu_instance_id == 2u);
  CHECK(mig_partial[1].kind == VerdictKind::kActivityUnknown);
  CHECK(mig_partial[1].confidence == watch::Confidence::kLow);
  // Instances listed, GPM reaching none (an A100): one verdict for the GPU.
  auto mig_none = Judge(test::Window(1, 10, [](watch::GpuSample& g, int, unsigned) {
    g.mig_mode = true;
    g.duty_pct.reset();
    g.gpm.reset();
    g.mig_instances = {{1, watch::Gpm{}}, {2, watch::Gpm{}}};
  }));
  REQUIRE(mig_none.size() == 1);
  CHECK(mig_none[0].kind == VerdictKind::kActivityUnknown);
  CHECK_FALSE(mig_none[0].gpu_instance_id.has_value());
  auto lost = Judge(test::Window(2, 10, [](watch::GpuSample& g, int i, unsigned u) {
    if (u == 1 && i >= 3) g.state = watch::GpuState::kLost;
  }));
  CHECK(lost.size() == 1);
  CHECK(lost[0].gpu.index == 0);
}

TEST_CASE("rules: thresholds are settable and checked", "[watch][rules]") {
  watch::Thresholds t;
  CHECK(watch::SetThreshold(t, "healthy_sm_active=0.9").empty());
  CHECK(t.healthy_sm_active == 0.9);
  auto strict = Judge(test::Window(1, 10, nullptr), t);  // SM 0.88 is no longer healthy
  REQUIRE(strict.size() == 1);
  CHECK(watch::VerdictName(strict[0].kind) == std::string("unclassified"));
  CHECK(strict[0].evidence["closest_rule"] == "healthy");
  CHECK(watch::SetThreshold(t, "healthy_sm_activ=0.9") ==
        "unknown threshold \"healthy_sm_activ\" (did you mean \"healthy_sm_active\"?)");
  CHECK(watch::SetThreshold(t, "low_sm_active=2") == "low_sm_active: a ratio from 0 to 1, not 2");
  CHECK(watch::SetThreshold(t, "busy_duty_pct=abc") == "busy_duty_pct: \"abc\" is not a number >= 0");
  CHECK(watch::SetThreshold(t, "idle_duty_pct") == "\"idle_duty_pct\": expected NAME=VALUE");
  CHECK(watch::ListThresholds(watch::Thresholds{}).size() == 23);
}
