// GPU health in doctor's gpu and driver layers: each finding with its code and fix, word for word, from
// HostFacts as the probe leaves them (sysfs link and config space; NVML's answers per bus id).
#include <catch2/catch.hpp>

#include "layers/sample.h"
#include "layers/table.h"

using namespace gp;
using verdict::Status;

namespace {

const verdict::Finding* HealthCode(const verdict::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

// Every GPU answered NVML, in P0, with healthy values.
test::Inputs HealthyLive() {
  test::Inputs t;
  for (auto& g : t.host.gpus) {
    g.nvml_status = 0;
    g.pcie = {16, 16, 32.0, 32.0, 32.0};
    g.health.pstate = 0;
    g.health.remap_pending = false;
    g.health.remap_failure = false;
    g.health.ecc_enabled = true;
    g.health.ecc_volatile_uncorrected = 0;
    g.health.ecc_aggregate_uncorrected = 0;
    g.health.recovery_action = 0;
    g.health.clock_reasons = 0;
    g.health.power_limit_mw = 700000;
    g.health.power_default_mw = 700000;
    g.health.persistence = false;
    g.health.nvlinks = 18;
  }
  return t;
}

const char* kFellOff =
    "sudo reboot (NVIDIA's action for a GPU that fell off the bus, Xid 79: restart the node); if it falls "
    "off "
    "again, drain the node and report the board to the provider";

}  // namespace

TEST_CASE("health: a healthy GPU gives no health finding; idle, power cap and app clocks are normal",
          "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[0].health.clock_reasons = 0x1 | 0x2 | 0x4 | 0x10 | 0x100;  // idle, app clocks, SW cap, sync
  t.host.gpus[1].health.pstate = 8;                                      // idle: the link slows down
  t.host.gpus[1].pcie.speed = 2.5;
  auto gpu = layers::CheckGpu(t.in());
  INFO(gpu.detail);
  CHECK(gpu.status == Status::kOk);
  CHECK(gpu.findings.size() == 1);
  auto drv = layers::CheckDriver(t.in());
  CHECK(HealthCode(drv, "driver.recovery-action") == nullptr);
}

TEST_CASE("health: off the bus, unbound, not known to NVML, lost, reset required", "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[2].config_all_ones = true;
  t.host.gpus[3].nvml_status = 6;
  t.host.gpus[4].nvml_status = 15;
  t.host.gpus[4].health = {};
  t.host.gpus[5].nvml_status = 16;
  t.host.gpus[5].health = {};
  auto r = layers::CheckGpu(t.in());
  CHECK(r.status == Status::kFail);
  auto* off = HealthCode(r, "gpu.off-bus");
  REQUIRE(off);
  CHECK(off->status == Status::kFail);
  CHECK(off->message == "GPU 2 (0000:12:00.0) is off the bus: its PCI config space reads all ones");
  CHECK(off->fix == std::optional<std::string>(kFellOff));
  auto* missing = HealthCode(r, "gpu.not-in-nvml");
  REQUIRE(missing);
  CHECK(missing->status == Status::kFail);
  CHECK(missing->message ==
        "GPU 3 (0000:13:00.0) is on the PCI bus but NVML does not know it (NVML_ERROR_NOT_FOUND)");
  CHECK(missing->fix == std::optional<std::string>(kFellOff));
  auto* lost = HealthCode(r, "gpu.lost");
  REQUIRE(lost);
  CHECK(lost->message ==
        "GPU 4 (0000:14:00.0) is lost: NVML answers NVML_ERROR_GPU_IS_LOST (fallen off the bus or otherwise "
        "inaccessible)");
  CHECK(lost->fix == std::optional<std::string>(kFellOff));
  auto* reset = HealthCode(r, "gpu.reset-required");
  REQUIRE(reset);
  CHECK(reset->status == Status::kFail);
  CHECK(reset->message ==
        "GPU 5 (0000:15:00.0) needs a reset before it can be used again: NVML answers "
        "NVML_ERROR_RESET_REQUIRED");
  // persistence unknown for it: the host's nvidia-persistenced is enabled, so the reset fix stops it first
  CHECK(reset->fix == std::optional<std::string>(
                          "stop the jobs on GPU 5, then sudo systemctl stop nvidia-persistenced && sudo "
                          "nvidia-smi -r -i 5 && sudo systemctl start nvidia-persistenced (a GPU held by "
                          "persistence mode refuses the reset)"));

  // A function bound on purpose to vfio-pci (passed to a VM) is none of doctor's business.
  t = HealthyLive();
  t.host.gpus[3].driver = "vfio-pci";
  t.host.gpus[3].nvml_status = 6;
  CHECK(HealthCode(layers::CheckGpu(t.in()), "gpu.not-in-nvml") == nullptr);
}

TEST_CASE("health: without NVML (--root), an unbound GPU among bound ones is a warning", "[layers][health]") {
  test::Inputs t;  // no nvml_status anywhere
  t.host.gpus[3].driver = "";
  auto r = layers::CheckGpu(t.in());
  auto* f = HealthCode(r, "gpu.unbound");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  CHECK(f->message ==
        "GPU 3 (0000:13:00.0) is bound to no driver while the others are bound to nvidia: the driver unbinds "
        "a GPU that fell off the bus");
  CHECK(f->fix ==
        std::optional<std::string>(
            "look for Xid 79 in the kernel log (sudo journalctl -k | grep -i xid), then sudo reboot; "
            "if it stays unbound, report the board to the provider"));
  // Every GPU unbound (a driver that does not support them) is the driver layer's business, not a fall.
  for (auto& g : t.host.gpus) g.driver = "";
  CHECK(HealthCode(layers::CheckGpu(t.in()), "gpu.unbound") == nullptr);
}

TEST_CASE("health: link width at any time; speed only in P0, against the GPU and its port",
          "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[1].pcie.width = 8;
  t.host.gpus[1].health.pstate = 8;  // width counts whatever the state
  auto r = layers::CheckGpu(t.in());
  auto* w = HealthCode(r, "gpu.pcie-width");
  REQUIRE(w);
  CHECK(w->status == Status::kWarn);
  CHECK(w->message == "GPU 1 (0000:11:00.0) PCIe link runs at x8 of its x16");
  CHECK(w->fix ==
        std::optional<std::string>(
            "sudo reboot retrains the link; if it comes up degraded again, reseat the GPU or its "
            "riser, or report the slot to the provider (check: sudo lspci -vv -s 0000:11:00.0 | grep "
            "LnkSta)"));
  CHECK(HealthCode(r, "gpu.pcie-speed") == nullptr);

  // In P0 at Gen2 of Gen5 under a Gen5 port: degraded.
  t = HealthyLive();
  t.host.gpus[0].pcie.speed = 5.0;
  r = layers::CheckGpu(t.in());
  auto* s = HealthCode(r, "gpu.pcie-speed");
  REQUIRE(s);
  CHECK(s->status == Status::kWarn);
  CHECK(s->message ==
        "GPU 0 (0000:10:00.0) PCIe link runs at 5 GT/s in P0, below the 32 GT/s its slot allows");
  // A Gen5 GPU in a Gen4 slot is not degraded.
  t.host.gpus[0].pcie = {16, 16, 16.0, 32.0, 16.0};
  CHECK(HealthCode(layers::CheckGpu(t.in()), "gpu.pcie-speed") == nullptr);
  // An idle GPU at Gen1 is not judged.
  t.host.gpus[0].pcie = {16, 16, 2.5, 32.0, 32.0};
  t.host.gpus[0].health.pstate = 8;
  CHECK(HealthCode(layers::CheckGpu(t.in()), "gpu.pcie-speed") == nullptr);

  // No performance state (--root): speed not judged, said once; width still judged.
  test::Inputs root;
  for (auto& g : root.host.gpus) g.pcie = {16, 16, 2.5, 32.0, 32.0};
  root.host.gpus[2].pcie.width = 8;
  r = layers::CheckGpu(root.in());
  CHECK(HealthCode(r, "gpu.pcie-speed") == nullptr);
  REQUIRE(HealthCode(r, "gpu.pcie-width"));
  auto* nj = HealthCode(r, "gpu.pcie-speed-not-judged");
  REQUIRE(nj);
  CHECK(nj->status == Status::kSkip);
  CHECK(nj->message ==
        "PCIe link speed not judged: no performance state (a GPU's link slows down when it idles)");
}

TEST_CASE("health: memory errors per generation; NOT_SUPPORTED is a skip", "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[0].health.remap_pending = true;
  t.host.gpus[1].health.remap_failure = true;
  t.host.gpus[2].health.remap_pending.reset();  // a V100: no row remapping, page retirement instead
  t.host.gpus[2].health.remap_failure.reset();
  t.host.gpus[2].health.retire_pending = true;
  t.host.gpus[2].health.retired_dbe_pages = 2;
  t.host.gpus[3].health.ecc_volatile_uncorrected = 3;
  t.host.gpus[3].health.ecc_aggregate_uncorrected = 5;
  t.host.gpus[4].health.ecc_enabled = false;
  auto r = layers::CheckGpu(t.in());
  auto* pending = HealthCode(r, "gpu.row-remap-pending");
  REQUIRE(pending);
  CHECK(pending->status == Status::kWarn);
  CHECK(pending->message ==
        "GPU 0 (0000:10:00.0) has a row remap pending: it takes effect at the next reset of the GPU");
  CHECK(pending->fix == std::optional<std::string>("stop the jobs on GPU 0, then sudo nvidia-smi -r -i 0"));
  auto* failure = HealthCode(r, "gpu.row-remap-failure");
  REQUIRE(failure);
  CHECK(failure->status == Status::kFail);
  CHECK(failure->message == "GPU 1 (0000:11:00.0) failed to remap a row: its memory cannot hide the error");
  CHECK(failure->fix == std::optional<std::string>(
                            "drain the node and ask the provider to replace the board (NVIDIA's memory error "
                            "management: a row remapping failure is a case for RMA)"));
  auto* retire = HealthCode(r, "gpu.retired-pages-pending");
  REQUIRE(retire);
  CHECK(retire->status == Status::kWarn);
  CHECK(
      retire->message ==
      "GPU 2 (0000:12:00.0) has a page retirement pending (2 pages retired for double-bit errors): it takes "
      "effect at the next reset of the GPU");
  CHECK(retire->fix == std::optional<std::string>("stop the jobs on GPU 2, then sudo nvidia-smi -r -i 2"));
  auto* ecc = HealthCode(r, "gpu.ecc-uncorrected");
  REQUIRE(ecc);
  CHECK(ecc->status == Status::kWarn);
  CHECK(ecc->message ==
        "GPU 3 (0000:13:00.0) has 3 uncorrected ECC errors since the driver loaded (5 over its life)");
  CHECK(ecc->fix ==
        std::optional<std::string>(
            "read where: nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i 3 (a pending remap or "
            "retirement is its own finding); if the count keeps growing, drain the node and report "
            "the board to the provider"));
  auto* off = HealthCode(r, "gpu.ecc-off");
  REQUIRE(off);
  CHECK(off->status == Status::kWarn);
  CHECK(off->message == "GPU 4 (0000:14:00.0) runs with ECC off, on a data-center board");
  CHECK(off->fix == std::optional<std::string>(
                        "sudo nvidia-smi -i 4 -e 1, then reset the GPU or reboot for it to take effect"));

  // NOT_SUPPORTED leaves every value unset: nothing to judge, nothing said.
  t = HealthyLive();
  for (auto& g : t.host.gpus) {
    g.health = {};
    g.health.pstate = 0;  // in P0: the link is judged, and healthy
  }
  r = layers::CheckGpu(t.in());
  CHECK(r.status == Status::kOk);
  CHECK(r.findings.size() == 1);
}

TEST_CASE("health: clock events: HW slowdown, power brake 0x80, thermal; power limit below default",
          "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[0].health.clock_reasons = 0x8;
  t.host.gpus[1].health.clock_reasons = 0x80 | 0x8;  // the brake also sets HW slowdown: one finding
  t.host.gpus[2].health.clock_reasons = 0x40;
  t.host.gpus[3].health.clock_reasons = 0x20 | 0x4;
  t.host.gpus[4].health.power_limit_mw = 400000;
  auto r = layers::CheckGpu(t.in());
  auto* hw = HealthCode(r, "gpu.clocks-hw-slowdown");
  REQUIRE(hw);
  CHECK(hw->status == Status::kWarn);
  CHECK(hw->message == "GPU 0 (0000:10:00.0) clocks are held down by a hardware slowdown (clock event 0x8)");
  CHECK(hw->fix ==
        std::optional<std::string>(
            "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i 0 shows the cause; the node's power "
            "supply and cooling are the provider's to check"));
  auto* brake = HealthCode(r, "gpu.clocks-power-brake");
  REQUIRE(brake);
  CHECK(brake->message ==
        "GPU 1 (0000:11:00.0) clocks are held down by the hardware power brake (clock event 0x80): an "
        "external signal, usually the node's power supply");
  CHECK(brake->fix == std::optional<std::string>(
                          "ask the provider to check the node's power supplies and power-brake wiring; "
                          "nvidia-smi -q -d PERFORMANCE -i 1 shows the brake while it holds"));
  int hw_count = 0;
  for (const auto& f : r.findings) hw_count += f.code == "gpu.clocks-hw-slowdown";
  CHECK(hw_count == 1);
  auto* thermal = HealthCode(r, "gpu.clocks-thermal");
  REQUIRE(thermal);
  CHECK(thermal->message ==
        "GPU 2 (0000:12:00.0) clocks are held down by a thermal slowdown (clock event 0x40)");
  CHECK(thermal->fix ==
        std::optional<std::string>(
            "nvidia-smi -q -d TEMPERATURE,PERFORMANCE -i 2 shows the temperatures; the node's "
            "cooling is the provider's to check"));
  int thermal_count = 0;
  for (const auto& f : r.findings) thermal_count += f.code == "gpu.clocks-thermal";
  CHECK(thermal_count == 2);  // software thermal (0x20) on GPU 3 too; its SW power cap (0x4) is normal
  auto* limit = HealthCode(r, "gpu.power-limit-low");
  REQUIRE(limit);
  CHECK(limit->status == Status::kWarn);
  CHECK(limit->message ==
        "GPU 4 (0000:14:00.0) enforced power limit is 400 W, below the board's default 700 W");
  CHECK(limit->fix == std::optional<std::string>("sudo nvidia-smi -i 4 -pl 700"));
}

TEST_CASE("health: NVLink links down on a board that has them", "[layers][health]") {
  auto t = HealthyLive();
  t.host.gpus[6].health.nvlinks_down = {3, 7};
  t.host.gpus[7].health.nvlinks.reset();  // a PCIe board: no link answered
  auto r = layers::CheckGpu(t.in());
  auto* f = HealthCode(r, "gpu.nvlink-down");
  REQUIRE(f);
  CHECK(f->status == Status::kFail);
  CHECK(f->message ==
        "GPU 6 (0000:16:00.0) has NVLink links 3, 7 of 18 down: its peer traffic falls back to PCIe");
  CHECK(f->fix == std::optional<std::string>(
                      "sudo reboot; on NVSwitch hosts check the fabric manager first (systemctl status "
                      "nvidia-fabricmanager); if links stay down, report the board to the provider"));
}

TEST_CASE("health: the driver's recovery action, every value of nvml.h and an unknown one",
          "[layers][health]") {
  struct Want {
    unsigned value;
    Status status;
    const char* message;
    const char* fix;
  };
  const Want wants[] = {
      {1, Status::kFail,
       "the driver asks for a reset of GPU 2 (0000:12:00.0) (NVML recovery action: GPU reset)",
       "stop the jobs on GPU 2, then sudo nvidia-smi -r -i 2"},
      {2, Status::kFail,
       "the driver asks for a reboot of the node for GPU 2 (0000:12:00.0) (NVML recovery action: node "
       "reboot)",
       "drain the node, then sudo reboot"},
      {3, Status::kFail,
       "the driver asks to stop peer-to-peer traffic on GPU 2 (0000:12:00.0) before it can say more (NVML "
       "recovery action: drain P2P)",
       "stop the jobs that use GPU 2's peer-to-peer or NVLink traffic, then run gpuprep doctor again to read "
       "the driver's next action"},
      {4, Status::kWarn,
       "GPU 2 (0000:12:00.0) runs at reduced capacity; the driver asks to drain and reset it (NVML recovery "
       "action: drain and reset)",
       "schedule no new work on GPU 2, let its jobs reach a checkpoint, then stop them and sudo nvidia-smi "
       "-r "
       "-i 2"},
      {5, Status::kFail,
       "the driver asks to recover the IMEX domain of GPU 2 (0000:12:00.0) (NVML recovery action: recover "
       "IMEX domain)",
       "restart the IMEX daemon on every node of the domain (sudo systemctl restart nvidia-imex), then run "
       "gpuprep doctor again"},
  };
  for (const auto& w : wants) {
    auto t = HealthyLive();
    t.host.gpus[2].health.recovery_action = w.value;
    auto r = layers::CheckDriver(t.in());
    INFO("value " << w.value << ": " << r.detail);
    auto* f = HealthCode(r, "driver.recovery-action");
    REQUIRE(f);
    CHECK(f->status == w.status);
    CHECK(f->message == w.message);
    CHECK(f->fix == std::optional<std::string>(w.fix));
  }
  auto t = HealthyLive();
  t.host.gpus[2].health.recovery_action = 9;
  auto r = layers::CheckDriver(t.in());
  auto* f = HealthCode(r, "driver.recovery-action-unknown");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  CHECK(f->message == "GPU 2 (0000:12:00.0) reports recovery action 9, a value gpuprep does not know");
  CHECK(f->fix == std::optional<std::string>(
                      "read it with nvidia-smi -q -i 2 and follow NVIDIA's documentation for that value"));

  // Present, it gives every health finding of that GPU its fix.
  t = HealthyLive();
  t.host.gpus[1].health.recovery_action = 2;
  t.host.gpus[1].health.remap_pending = true;
  t.host.gpus[1].pcie.width = 8;
  auto g = layers::CheckGpu(t.in());
  REQUIRE(HealthCode(g, "gpu.row-remap-pending"));
  CHECK(HealthCode(g, "gpu.row-remap-pending")->fix ==
        std::optional<std::string>("drain the node, then sudo reboot"));
  CHECK(HealthCode(g, "gpu.pcie-width")->fix ==
        std::optional<std::string>("drain the node, then sudo reboot"));
}

// A real H200 host (tests/fixtures/device/h200): persistence mode Enabled in NVML, no nvidia-persistenced
// unit. The driver layer warned that GPU state is torn down between jobs; NVML says it is kept.
TEST_CASE("health: persistence mode on in NVML is persistence, with or without the daemon",
          "[layers][health]") {
  auto t = HealthyLive();
  t.host.driver.module.loaded = true;
  t.host.driver.persistenced_enabled = false;
  for (auto& g : t.host.gpus) g.health.persistence = true;
  CHECK(HealthCode(layers::CheckDriver(t.in()), "driver.persistenced") == nullptr);
  t.host.gpus[3].health.persistence = false;  // one GPU without it: the warning stands
  CHECK(HealthCode(layers::CheckDriver(t.in()), "driver.persistenced") != nullptr);
  for (auto& g : t.host.gpus) g.health.persistence.reset();  // NVML did not say: the daemon decides
  CHECK(HealthCode(layers::CheckDriver(t.in()), "driver.persistenced") != nullptr);
}

// A daemon started by hand (running, its unit not enabled) keeps persistence until the next boot only:
// doctor says so although NVML reports persistence on, and apply enables the unit (plan tests).
TEST_CASE("health: nvidia-persistenced running but not enabled is a warning", "[layers][health]") {
  auto t = HealthyLive();
  t.host.driver.module.loaded = true;
  t.host.driver.persistenced_enabled = false;
  t.host.driver.persistenced_running = true;
  for (auto& g : t.host.gpus) g.health.persistence = true;
  const auto report = layers::CheckDriver(t.in());  // the finding points into it
  const auto* f = HealthCode(report, "driver.persistenced");
  REQUIRE(f != nullptr);
  CHECK(f->message.find("running but not enabled") != std::string::npos);
  t.host.driver.persistenced_enabled = true;  // enabled and running: nothing to say
  CHECK(HealthCode(layers::CheckDriver(t.in()), "driver.persistenced") == nullptr);
}
