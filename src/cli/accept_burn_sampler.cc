#include "cli/accept_burn_sampler.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

#include "accept/burn_sample.h"
#include "watch/sampler.h"
#include "watch/xid.h"

namespace gp::cli {
namespace {

constexpr std::chrono::seconds kReadEvery{1};
constexpr std::chrono::seconds kReadDeadline{2};
constexpr size_t kMaxKernelLogRead = 1 << 20;  // bytes of kernel log read per second; the rest waits

}  // namespace

BurnSampler::BurnSampler(Context& ctx, int gpus)
    : gpus_(gpus), samples_(static_cast<size_t>(gpus)), xids_(static_cast<size_t>(gpus)) {
  if (!ctx.open_nvml) {
    error_ = "NVML cannot be loaded here";
    return;
  }
  sys::NvmlOpenResult opened = ctx.open_nvml(sys::NvmlSessionOptions{});
  if (!opened.session) {
    error_ = opened.error.empty() ? "NVML did not open" : opened.error;
    return;
  }
  if (opened.session->Gpus().size() < static_cast<size_t>(gpus)) {
    error_ = "NVML counts " + std::to_string(opened.session->Gpus().size()) + " GPUs, " +
             std::to_string(gpus) + " were measured";
    opened.session->Close();
    return;
  }
  session_ = std::move(opened.session);
  // Xid events: the kernel log from now on. Without it (no root where dmesg_restrict is set) the burn
  // still runs; the clocks check says so.
  if (std::string e = kernel_log_.Open("/dev/kmsg"); !e.empty())
    spdlog::warn("Xid events during the burn are not followed: {}", e);
  thread_ = std::thread([this] { Loop(); });
}

BurnSampler::~BurnSampler() { Stop(); }

// The loop wakes at once, so the first reading is the burn's start, not up to a second after it.
void BurnSampler::Burning() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    burning_ = true;
  }
  cv_.notify_all();
}

void BurnSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (session_) {
    session_->Close();
    session_.reset();
  }
}

void BurnSampler::Loop() {
  std::vector<sys::NvmlGpu> gpus(session_->Gpus().begin(), session_->Gpus().begin() + gpus_);
  watch::GpuSampler sampler(gpus);
  std::vector<size_t> positions(static_cast<size_t>(gpus_));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<std::chrono::steady_clock::time_point> started;
  while (!stop_) {
    if (burning_) {
      lock.unlock();
      const auto now = std::chrono::steady_clock::now();
      if (!started) {
        started = now;
        if (kernel_log_.IsOpen()) kernel_log_.ReadNew(kMaxKernelLogRead);  // what came before the burn
      }
      const auto readings = session_->Read(positions, now + kReadDeadline);
      auto converted = sampler.Convert(readings);
      if (kernel_log_.IsOpen())
        if (const sys::LogRead log = kernel_log_.ReadNew(kMaxKernelLogRead); log.ok)
          watch::AttachXids(log.data, converted);
      const double at_s = std::chrono::duration<double>(now - *started).count();
      lock.lock();
      for (size_t i = 0; i < converted.size() && i < samples_.size(); ++i) {
        for (const watch::GpuXid& x : converted[i].xids) xids_[i].push_back({x.xid, at_s});
        samples_[i].push_back(std::move(converted[i]));
      }
    }
    const bool was_burning = burning_;
    cv_.wait_for(lock, kReadEvery, [this, was_burning] { return stop_ || burning_ != was_burning; });
  }
}

std::vector<std::string> BurnSampler::Lines() const {
  std::vector<std::string> out;
  for (int g = 0; g < gpus_; ++g) {
    const auto c =
        accept::SummariseBurnClocks(g, samples_[static_cast<size_t>(g)], xids_[static_cast<size_t>(g)]);
    if (c.samples > 0) out.push_back(accept::BurnClocksLine(c));
  }
  return out;
}

}  // namespace gp::cli
