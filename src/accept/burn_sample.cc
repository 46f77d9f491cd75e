#include "accept/burn_sample.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace gp::accept {
namespace {

// nvmlClocksEventReason bits (nvml.h), in the order the record names them.
struct ReasonBit {
  const char* name;
  uint64_t bit;
};
constexpr ReasonBit kReasonBits[] = {
    {"gpu_idle", 0x1},    {"applications_clocks", 0x2}, {"sw_power_cap", 0x4}, {"hw_slowdown", 0x8},
    {"sync_boost", 0x10}, {"sw_thermal", 0x20},         {"hw_thermal", 0x40},  {"hw_power_brake", 0x80},
};

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

BurnClocks SummariseBurnClocks(int gpu, const std::vector<watch::GpuSample>& samples,
                               const std::vector<BurnXid>& xids) {
  BurnClocks c;
  c.gpu = gpu;
  c.xids = xids;
  std::vector<int64_t> clocks;
  std::vector<double> power, temperature;
  uint64_t with_reasons = 0;
  uint64_t held[std::size(kReasonBits)] = {};
  for (const auto& s : samples) {
    if (s.state != watch::GpuState::kOk) continue;
    ++c.samples;
    if (s.sm_clock_mhz) clocks.push_back(*s.sm_clock_mhz);
    if (s.power_w && std::isfinite(*s.power_w)) power.push_back(*s.power_w);
    if (s.temperature_c && std::isfinite(*s.temperature_c)) temperature.push_back(*s.temperature_c);
    if (s.clock_event_reasons) {
      ++with_reasons;
      for (size_t i = 0; i < std::size(kReasonBits); ++i)
        if (*s.clock_event_reasons & kReasonBits[i].bit) ++held[i];
    }
  }
  if (!clocks.empty()) {
    c.sm_clock_median_mhz = Median(clocks);
    c.sm_clock_min_mhz = *std::min_element(clocks.begin(), clocks.end());
  }
  if (!power.empty()) {
    c.power_median_w = Median(power);
    c.power_max_w = *std::max_element(power.begin(), power.end());
  }
  if (!temperature.empty()) {
    c.temperature_median_c = Median(temperature);
    c.temperature_max_c = *std::max_element(temperature.begin(), temperature.end());
  }
  if (with_reasons > 0)
    for (size_t i = 0; i < std::size(kReasonBits); ++i)
      if (held[i] > 0)
        c.reasons.emplace_back(kReasonBits[i].name,
                               static_cast<double>(held[i]) / static_cast<double>(with_reasons));
  return c;
}

std::string BurnClocksLine(const BurnClocks& c) {
  using Json = nlohmann::ordered_json;
  Json j{{"record", "burn_clocks"}, {"gpu", c.gpu}, {"samples", c.samples}};
  if (c.sm_clock_median_mhz) {
    j["sm_clock_median_mhz"] = *c.sm_clock_median_mhz;
    j["sm_clock_min_mhz"] = *c.sm_clock_min_mhz;
  }
  if (c.power_median_w) {
    j["power_median_w"] = std::round(*c.power_median_w * 10) / 10;
    j["power_max_w"] = std::round(*c.power_max_w * 10) / 10;
  }
  if (c.temperature_median_c) {
    j["temperature_median_c"] = *c.temperature_median_c;
    j["temperature_max_c"] = *c.temperature_max_c;
  }
  Json reasons = Json::object();
  for (const auto& [name, share] : c.reasons)
    reasons[name] = std::max(std::round(share * 10000) / 10000, 0.0001);  // a held reason stays above 0
  j["reasons"] = reasons;
  Json xids = Json::array();
  for (const auto& x : c.xids) xids.push_back(Json{{"code", x.code}, {"at_s", std::round(x.at_s * 10) / 10}});
  j["xids"] = xids;
  return j.dump();
}

}  // namespace gp::accept
