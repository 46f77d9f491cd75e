// accept's burn sampler: reads every measured GPU through an NVML session (a stand-in here, answering as
// NVML's readings come: clock, power in mW, the GPU temperature, the clock-event bitmask) once a second from
// Burning() to Stop(), and writes one burn_clocks record per GPU that accept's recording reader takes;
// nothing is read before the burn starts, and a missing NVML is said, not hidden.
#include "cli/accept_burn_sampler.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "accept/record.h"

namespace {

class StandinSession : public gp::sys::NvmlSession {
 public:
  explicit StandinSession(int gpus) {
    for (int i = 0; i < gpus; ++i) {
      gp::sys::NvmlGpu g;
      g.index = static_cast<unsigned>(i);
      g.name = "NVIDIA H100 80GB HBM3";
      gpus_.push_back(g);
    }
  }
  const std::vector<gp::sys::NvmlGpu>& Gpus() const override { return gpus_; }
  std::vector<gp::sys::NvmlReading> Read(const std::vector<size_t>& positions,
                                         std::chrono::steady_clock::time_point) override {
    std::vector<gp::sys::NvmlReading> out;
    for (size_t p : positions) {
      gp::sys::NvmlReading r;
      r.time_us = reads * 1000000;
      r.sm_clock_mhz = p == 1 ? 345u : 1755u;
      r.power_mw = 698000;
      if (p == 0) r.temperature_c = 70u;                     // GPU 1: NVML gives none
      r.clock_event_reasons = p == 1 ? 0x80u | 0x8u : 0x4u;  // GPU 1: the power brake
      out.push_back(r);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ++reads;
      if (!burn_started) ++reads_before_burn;
    }
    read.notify_all();
    return out;
  }
  void Close() override { closed = true; }
  // Waits (at most 30 s) until the sampler has read `n` times.
  bool WaitForReads(int64_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return read.wait_for(lock, std::chrono::seconds(30), [&] { return reads >= n; });
  }
  void MarkBurnStarted() {
    std::lock_guard<std::mutex> lock(mu);
    burn_started = true;
  }
  std::vector<gp::sys::NvmlGpu> gpus_;
  std::mutex mu;
  std::condition_variable read;
  int64_t reads = 0;
  int64_t reads_before_burn = 0;
  bool burn_started = false;
  bool closed = false;
};

}  // namespace

TEST_CASE("accept's burn sampler: one burn_clocks record per GPU, read while the burn runs",
          "[accept][burn]") {
  gp::cli::Context ctx;
  StandinSession* session = nullptr;
  ctx.open_nvml = [&session](const gp::sys::NvmlSessionOptions&) {
    auto s = std::make_unique<StandinSession>(2);
    session = s.get();
    return gp::sys::NvmlOpenResult{std::move(s), ""};
  };
  gp::cli::BurnSampler sampler(ctx, 2);
  CHECK(sampler.Error().empty());
  REQUIRE(session != nullptr);  // opened before the constructor returns
  session->MarkBurnStarted();
  sampler.Burning();
  // The first reading comes when the burn starts (Burning wakes the sampler), not a second later.
  REQUIRE(session->WaitForReads(1));
  CHECK(session->reads_before_burn == 0);  // nothing is read before the burn
  sampler.Stop();                          // closes and frees the session
  const auto lines = sampler.Lines();
  REQUIRE(lines.size() == 2);
  std::string text =
      R"({"record":"run","schema":1,"started_at":"x","finished_at":"x","host":"h","driver_version":"1",)"
      R"("topology":"pcie","cpus":1,"ram_bytes":1,"nvme_bytes":[]})"
      "\n";
  for (int i = 0; i < 2; ++i)
    text += R"({"record":"gpu","gpu":)" + std::to_string(i) +
            R"(,"uuid":"u","serial":"s","name":"n","pci_device_id":"0x2330","memory_total_mib":1,)"
            R"("pcie_max_gen":5,"pcie_max_width":16})"
            "\n";
  for (const auto& l : lines) text += l + "\n";
  const auto rec = gp::accept::ParseRecording(text + "{\"record\":\"end\"}\n", "sampled");
  REQUIRE(rec.burn_clocks.size() == 2);
  CHECK(rec.burn_clocks[0].samples >= 1);
  CHECK(rec.burn_clocks[0].sm_clock_median_mhz == 1755);
  CHECK(rec.burn_clocks[0].power_median_w == Approx(698));
  REQUIRE(rec.burn_clocks[0].temperature_max_c);
  CHECK(*rec.burn_clocks[0].temperature_max_c == Approx(70));
  CHECK(*rec.burn_clocks[0].temperature_median_c == Approx(70));
  CHECK_FALSE(rec.burn_clocks[1].temperature_median_c);
  REQUIRE(rec.burn_clocks[0].reasons.size() == 1);
  CHECK(rec.burn_clocks[0].reasons[0].first == "sw_power_cap");
  CHECK(rec.burn_clocks[1].sm_clock_min_mhz == 345);
  REQUIRE(rec.burn_clocks[1].reasons.size() == 2);
  CHECK(rec.burn_clocks[1].reasons[1] == std::make_pair(std::string("hw_power_brake"), 1.0));
}

TEST_CASE("accept's burn sampler: a run that ends before its burn has no readings", "[accept][burn]") {
  gp::cli::Context ctx;
  ctx.open_nvml = [](const gp::sys::NvmlSessionOptions&) {
    return gp::sys::NvmlOpenResult{std::make_unique<StandinSession>(2), ""};
  };
  gp::cli::BurnSampler sampler(ctx, 2);
  CHECK(sampler.Error().empty());
  sampler.Stop();
  CHECK(sampler.Lines().empty());
}

TEST_CASE("accept's burn sampler: no NVML is said", "[accept][burn]") {
  gp::cli::Context ctx;
  gp::cli::BurnSampler none(ctx, 2);
  CHECK(none.Error() == "NVML cannot be loaded here");
  none.Burning();
  none.Stop();
  CHECK(none.Lines().empty());
  ctx.open_nvml = [](const gp::sys::NvmlSessionOptions&) {
    return gp::sys::NvmlOpenResult{std::make_unique<StandinSession>(1), ""};
  };
  gp::cli::BurnSampler fewer(ctx, 2);
  CHECK(fewer.Error() == "NVML counts 1 GPUs, 2 were measured");
}
