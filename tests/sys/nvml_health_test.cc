// DlopenNativeLibs' health reads against the stand-in libnvidia-ml.so.1 (tests/watch/standin/), which
// answers with nvml.h's structures and return codes per generation: remapped rows on A100 and H100, retired
// pages on V100 and P100, GPU_IS_LOST and RESET_REQUIRED from the bus-id lookup, clock-event reasons with
// the power brake (0x80), the recovery action (an unknown value included), the state of each NVLink.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "support/temp_dir.h"
#include "sys/native.h"

using namespace gp;

namespace {

// The stand-in reads its trace once per process, at the first nvmlInit: one trace for every case.
const char* kTrace = R"(gpus 9
gpu 0 name="NVIDIA A100-SXM4-80GB" arch=7 bus=10 remap_pending=1 remap_corr=1 persistence=1 nvlink_links=12
gpu 1 arch=9 bus=11 remap_failure=1 remap_unc=2 ecc_volatile_unc=3 ecc_aggregate_unc=5 nvlink_links=18
gpu 2 name="Tesla V100-SXM2-32GB" arch=5 bus=12 retire_pending=1 retired_dbe=2 retired_sbe=1 nvlink_links=6
gpu 3 name="Tesla P100-PCIE-16GB" arch=4 bus=13 ecc_off=1 pstate=8
gpu 4 bus=14
gpu 5 bus=15 recovery_action=9 power_default_w=700
gpu 6 bus=16 nvlink_links=18 nvlink_active=16
gpu 7 bus=17 reset_required=1
gpu 8 bus=18 recovery_action=4
unsupported 8 field=230
event 4 at_ms=0 lost
step
at 1 reasons=0x88
at 5 power_limit_w=400 reasons=0x4
)";

struct StandinRun {
  StandinRun() {
    ::setenv("GPUPREP_STANDIN_TRACE", dir.Write("/health.trace", kTrace).c_str(), 1);
    sys::DlopenNativeLibs libs(GP_NVML_STANDIN_DIR);
    info = libs.Nvml({"0000:10:00.0", "0000:11:00.0", "0000:12:00.0", "0000:13:00.0", "0000:14:00.0",
                      "0000:15:00.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0", "0000:99:00.0"});
  }
  ~StandinRun() {
    ::unsetenv("GPUPREP_STANDIN_TRACE");  // no later test or child process inherits it
  }
  test::TempDir dir{"gpuprep-nvml-health"};
  sys::NvmlInfo info;
};

}  // namespace

TEST_CASE("NVML health through the stand-in: every answer per generation, by bus id", "[probe][health]") {
  StandinRun run;
  const auto& b = run.info.buses;
  INFO(run.info.error);
  REQUIRE(run.info.loaded);
  REQUIRE(b.size() == 10);
  CHECK(b[0].pci == "0000:10:00.0");

  // A100: row remapping pending, persistence on, 12 links all up, P0.
  CHECK(b[0].status == 0);
  CHECK(b[0].health.remap_pending == true);
  CHECK(b[0].health.remap_failure == false);
  CHECK_FALSE(b[0].health.retire_pending);  // NOT_SUPPORTED from Ampere on: a skip
  CHECK_FALSE(b[0].health.retired_dbe_pages);
  CHECK(b[0].health.persistence == true);
  CHECK(b[0].health.pstate == 0u);
  CHECK(b[0].health.nvlinks == 12u);
  CHECK(b[0].health.nvlinks_down.empty());
  CHECK(b[0].health.recovery_action == 0u);
  CHECK(b[0].health.ecc_enabled == true);

  // H100: a remap failure, uncorrected errors, the power brake with HW slowdown.
  CHECK(b[1].health.remap_failure == true);
  CHECK(b[1].health.ecc_volatile_uncorrected == 3u);
  CHECK(b[1].health.ecc_aggregate_uncorrected == 5u);
  CHECK(b[1].health.clock_reasons == 0x88u);

  // V100 and P100: page retirement instead of row remapping.
  CHECK_FALSE(b[2].health.remap_pending);
  CHECK(b[2].health.retire_pending == true);
  CHECK(b[2].health.retired_dbe_pages == 2u);  // the count, asked with a zero-sized buffer
  CHECK(b[3].health.retire_pending == false);
  CHECK(b[3].health.retired_dbe_pages == 0u);
  CHECK(b[3].health.ecc_enabled == false);
  CHECK_FALSE(b[3].health.ecc_volatile_uncorrected);
  CHECK(b[3].health.pstate == 8u);
  CHECK_FALSE(b[3].health.nvlinks);  // a PCIe board: no link answers

  // Lost, and one that needs a reset: the lookup's own codes, no health read.
  CHECK(b[4].status == 15);
  CHECK_FALSE(b[4].health.pstate);
  CHECK(b[7].status == 16);

  // An unknown recovery action comes through as its number; the power limit below the default.
  CHECK(b[5].health.recovery_action == 9u);
  CHECK(b[5].health.power_limit_mw == 400000u);
  CHECK(b[5].health.power_default_mw == 700000u);
  CHECK(b[5].health.clock_reasons == 0x4u);

  // Links 16 and 17 of 18 down.
  CHECK(b[6].health.nvlinks == 18u);
  CHECK(b[6].health.nvlinks_down == std::vector<unsigned>{16, 17});

  // A driver without the recovery-action field: NOT_SUPPORTED in that entry, a skip.
  CHECK(b[8].status == 0);
  CHECK_FALSE(b[8].health.recovery_action);

  // An address NVML does not drive.
  CHECK(b[9].status == 6);
}
