// NVML readings -> sample values: wrap-safe counter deltas, resets dropped, link peaks, GPM's 0-100
// mapped to ratios, the first reading only a baseline.
#include "watch/sampler.h"

#include <catch2/catch.hpp>

using namespace gp;

TEST_CASE("sampler: counter deltas wrap at the width NVML gives", "[watch][sampler]") {
  CHECK(watch::WrapDelta(10, 25, 64) == 15);
  CHECK(watch::WrapDelta(UINT64_MAX - 4, 10, 64) == 15);
  CHECK(watch::WrapDelta(0xFFFFFFF0ull, 0x10, 32) == 0x20);
}

TEST_CASE("sampler: link peaks", "[watch][sampler]") {
  // PCIe 5.0 x16: 32 GT/s x 128/130 / 8 x 16 lanes = 63.0 GB/s per direction.
  CHECK(*watch::PcieLinkPeakBytesPerSecond(5, 16) == Approx(63.015e9).epsilon(1e-4));
  CHECK(*watch::PcieLinkPeakBytesPerSecond(1, 1) == Approx(250e6));
  CHECK_FALSE(watch::PcieLinkPeakBytesPerSecond(6, 16));  // FLIT encoding: not modelled
  sys::NvmlGpu g;
  g.nvlink_links = 18;
  g.nvlink_speed_mbps = 26562;
  CHECK(*watch::NvlinkPeakBytesPerSecond(g) == Approx(478.116e9));
}

TEST_CASE("sampler: rates from cumulative counters, across a wrap, a reset dropped", "[watch][sampler]") {
  sys::NvmlGpu info;
  info.index = 0;
  info.pcie_max_generation = 5;
  info.pcie_max_width = 16;
  info.power_default_limit_mw = 700000;
  watch::GpuSampler s({info});
  auto reading = [](int64_t t_us, uint64_t pcie, uint64_t brake_ns) {
    sys::NvmlReading r;
    r.time_us = t_us;
    r.duty_supported = true;
    r.duty_pct = {100, 0, 100};
    r.power_mw = 350000;
    r.power_limit_enforced_mw = 700000;
    r.pcie_tx_bytes = sys::NvmlCounter{pcie, t_us, 64};
    r.hw_power_brake_ns = sys::NvmlCounter{brake_ns, t_us, 64};
    r.gpm = sys::NvmlGpm{88.0, 40.0, 55.0, 123.0};  // a DRAM reading above 100 is clamped
    return r;
  };
  auto first = s.Convert({reading(1000000, UINT64_MAX - 999, 0)});
  CHECK_FALSE(first[0].duty_pct);  // the baseline
  CHECK_FALSE(first[0].pcie_tx_bytes_per_s);
  auto second = s.Convert({reading(2000000, 1000000000 - 1000, 500000000)});
  REQUIRE(second[0].pcie_tx_bytes_per_s);
  CHECK(*second[0].pcie_tx_bytes_per_s == Approx(1e9));  // across the 2^64 wrap
  CHECK(*second[0].hw_power_brake_ratio == Approx(0.5));
  CHECK(*second[0].duty_pct == Approx(200.0 / 3));
  CHECK(second[0].duty_zero_samples == 1);
  CHECK(*second[0].power_w == Approx(350));
  CHECK(*second[0].power_limit_default_w == Approx(700));
  CHECK(*second[0].gpm->sm_active_ratio == Approx(0.88));
  CHECK(*second[0].gpm->dram_active_ratio == 1.0);
  // A counter that goes back by less than a wrap would take (a driver reload): no rate, not a huge one.
  auto third = s.Convert({reading(3000000, 5, 500000000)});
  CHECK_FALSE(third[0].pcie_tx_bytes_per_s);
  sys::NvmlReading late;
  late.state = sys::NvmlReadState::kLate;
  CHECK(s.Convert({late})[0].state == watch::GpuState::kGap);
  sys::NvmlReading lost;
  lost.state = sys::NvmlReadState::kLost;
  CHECK(s.Convert({lost})[0].state == watch::GpuState::kLost);
}

TEST_CASE("sampler: every MIG instance is recorded, GPM values only where GPM reached it",
          "[watch][sampler]") {
  sys::NvmlGpu info;
  info.index = 0;
  info.mig_enabled = true;
  info.gpu_instance_ids = {1, 2, 5};
  watch::GpuSampler s({info});
  sys::NvmlReading r;
  r.time_us = 1000000;
  r.mig_gpm = {{5, sys::NvmlGpm{40.0, 20.0, 10.0, 30.0}}, {1, sys::NvmlGpm{86.0, 40.0, 50.0, 45.0}}};
  auto g = s.Convert({r})[0];
  CHECK(g.mig_mode == true);
  REQUIRE(g.mig_instances.size() == 3);
  CHECK(g.mig_instances[0].gpu_instance_id == 1u);
  CHECK(*g.mig_instances[0].gpm.sm_active_ratio == Approx(0.86));
  CHECK(g.mig_instances[1].gpu_instance_id == 2u);  // listed, not reached: every value null
  CHECK_FALSE(g.mig_instances[1].gpm.sm_active_ratio);
  CHECK_FALSE(g.mig_instances[1].gpm.tensor_active_ratio);
  CHECK(g.mig_instances[2].gpu_instance_id == 5u);
  CHECK(*g.mig_instances[2].gpm.tensor_active_ratio == Approx(0.10));
}
