// gpu layer, what NVML says of each GPU it answered for: memory errors per generation (row remapping on
// A100 and newer, page retirement before), uncorrected ECC, ECC mode; the clock-event reasons that mean
// hardware trouble; the enforced power limit; NVLink links. NVML_ERROR_NOT_SUPPORTED leaves a value unset:
// a skip, never a finding. Bits and values: NVIDIA's nvml.h (nvmlClocksEventReason*); actions: NVIDIA's
// A100 GPU memory error management guide (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/: a pending remap
// takes effect at a reset, a remap failure is a case for RMA).
#include "layers/gpu/health.h"

#include <string>
#include <vector>

#include "util/health_codes.h"
#include "util/strings.h"

namespace gp::layers {
namespace {

// nvmlClocksEventReason* (nvml.h). Idle (0x1), application clocks (0x2), the software power cap (0x4),
// sync boost (0x10) and the display clock (0x100) are normal operation and never flagged.
constexpr unsigned long long kHwSlowdown = 0x8;
constexpr unsigned long long kSwThermal = 0x20;
constexpr unsigned long long kHwThermal = 0x40;
constexpr unsigned long long kHwPowerBrake = 0x80;

std::string Hex(unsigned long long v) {
  const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xf]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

void CheckMemory(const CheckInput& in, const probe::Gpu& g, LayerReport& r) {
  const sys::NvmlHealth& m = g.health;
  const std::string who = GpuLabel(g), i = std::to_string(g.index);
  if (m.remap_failure.value_or(false))
    r.Add("gpu.row-remap-failure", Status::kFail,
          who + " failed to remap a row: its memory cannot hide the error",
          FixFor(
              in.host, g,
              "drain the node and ask the provider to replace the board (NVIDIA's memory error management: a "
              "row remapping failure is a case for RMA)"));
  else if (m.remap_pending.value_or(false))
    r.Add("gpu.row-remap-pending", Status::kWarn,
          who + " has a row remap pending: it takes effect at the next reset of the GPU",
          FixFor(in.host, g, ResetFix(in.host, g)));
  if (m.retire_pending.value_or(false))
    r.Add("gpu.retired-pages-pending", Status::kWarn,
          who + " has a page retirement pending (" + std::to_string(m.retired_dbe_pages.value_or(0)) +
              " pages retired for double-bit errors): it takes effect at the next reset of the GPU",
          FixFor(in.host, g, ResetFix(in.host, g)));
  if (m.ecc_volatile_uncorrected.value_or(0) > 0)
    r.Add("gpu.ecc-uncorrected", Status::kWarn,
          who + " has " + std::to_string(*m.ecc_volatile_uncorrected) +
              " uncorrected ECC errors since the driver loaded (" +
              std::to_string(m.ecc_aggregate_uncorrected.value_or(*m.ecc_volatile_uncorrected)) +
              " over its life)",
          FixFor(in.host, g,
                 "read where: nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i " + i +
                     " (a pending remap or retirement is its own finding); if the count keeps growing, drain "
                     "the node and report the board to the provider"));
  const manifest::GpuModel* model = GpuModelOf(in.compat, g);
  if (m.ecc_enabled == false && model && model->datacenter)
    r.Add("gpu.ecc-off", Status::kWarn, who + " runs with ECC off, on a data-center board",
          "sudo nvidia-smi -i " + i + " -e 1, then reset the GPU or reboot for it to take effect");
}

void CheckClocks(const CheckInput& in, const probe::Gpu& g, LayerReport& r) {
  const sys::NvmlHealth& m = g.health;
  const std::string who = GpuLabel(g), i = std::to_string(g.index);
  const unsigned long long reasons = m.clock_reasons.value_or(0);
  if (reasons & kHwPowerBrake)
    r.Add(
        health_codes::kClocksPowerBrake, Status::kWarn,
        who +
            " clocks are held down by the hardware power brake (clock event 0x80): an external signal, "
            "usually the node's power supply",
        FixFor(in.host, g,
               "ask the provider to check the node's power supplies and power-brake wiring; nvidia-smi -q -d "
               "PERFORMANCE -i " +
                   i + " shows the brake while it holds"));
  for (unsigned long long bit : {kHwThermal, kSwThermal})
    if (reasons & bit)
      r.Add(health_codes::kClocksThermal, Status::kWarn,
            who + " clocks are held down by a thermal slowdown (clock event " + Hex(bit) + ")",
            FixFor(in.host, g,
                   "nvidia-smi -q -d TEMPERATURE,PERFORMANCE -i " + i +
                       " shows the temperatures; the node's cooling is the provider's to check"));
  // The brake and a hardware thermal slowdown also raise the HW slowdown bit: said once, by its cause.
  if ((reasons & kHwSlowdown) && !(reasons & (kHwPowerBrake | kHwThermal)))
    r.Add(health_codes::kClocksHwSlowdown, Status::kWarn,
          who + " clocks are held down by a hardware slowdown (clock event 0x8)",
          FixFor(in.host, g,
                 "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i " + i +
                     " shows the cause; the node's power supply and cooling are the provider's to check"));
  if (m.power_limit_mw && m.power_default_mw && *m.power_limit_mw < *m.power_default_mw) {
    const std::string limit = std::to_string(*m.power_limit_mw / 1000);
    const std::string def = std::to_string(*m.power_default_mw / 1000);
    r.Add("gpu.power-limit-low", Status::kWarn,
          who + " enforced power limit is " + limit + " W, below the board's default " + def + " W",
          "sudo nvidia-smi -i " + i + " -pl " + def);
  }
}

void CheckNvlinks(const CheckInput& in, const probe::Gpu& g, LayerReport& r) {
  const sys::NvmlHealth& m = g.health;
  if (!m.nvlinks || m.nvlinks_down.empty()) return;
  std::vector<std::string> down;
  down.reserve(m.nvlinks_down.size());
  for (unsigned link : m.nvlinks_down) down.push_back(std::to_string(link));
  r.Add("gpu.nvlink-down", Status::kFail,
        GpuLabel(g) + " has NVLink links " + Join(down, ", ") + " of " + std::to_string(*m.nvlinks) +
            " down: its peer traffic falls back to PCIe",
        FixFor(in.host, g,
               "sudo reboot; on NVSwitch hosts check the fabric manager first (systemctl status "
               "nvidia-fabricmanager); if links stay down, report the board to the provider"));
}

}  // namespace

void CheckGpuHealth(const CheckInput& in, LayerReport& r) {
  for (const auto& g : in.host.gpus) {
    if (g.nvml_status != 0) continue;  // not asked, or no handle: bus.cc says why
    const size_t from = r.findings.size();
    CheckMemory(in, g, r);
    CheckClocks(in, g, r);
    CheckNvlinks(in, g, r);
    MarkGpu(r, from, g);
  }
}

}  // namespace gp::layers
