#include "cli/accept_burn_sampler.h"

#include <chrono>

#include "accept/burn_sample.h"
#include "watch/sampler.h"

namespace gp::cli {
namespace {

constexpr std::chrono::seconds kReadEvery{1};
constexpr std::chrono::seconds kReadDeadline{2};

}  // namespace

BurnSampler::BurnSampler(Context& ctx, int gpus) : gpus_(gpus), samples_(static_cast<size_t>(gpus)) {
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
  thread_ = std::thread([this] { Loop(); });
}

BurnSampler::~BurnSampler() { Stop(); }

void BurnSampler::Burning() { burning_ = true; }

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
  std::vector<size_t> positions;
  for (int i = 0; i < gpus_; ++i) positions.push_back(static_cast<size_t>(i));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (burning_) {
      lock.unlock();
      const auto readings = session_->Read(positions, std::chrono::steady_clock::now() + kReadDeadline);
      const auto converted = sampler.Convert(readings);
      lock.lock();
      for (size_t i = 0; i < converted.size() && i < samples_.size(); ++i)
        samples_[i].push_back(converted[i]);
    }
    cv_.wait_for(lock, kReadEvery, [this] { return stop_; });
  }
}

std::vector<std::string> BurnSampler::Lines() const {
  std::vector<std::string> out;
  for (int g = 0; g < gpus_; ++g) {
    const auto c = accept::SummariseBurnClocks(g, samples_[static_cast<size_t>(g)]);
    if (c.samples > 0) out.push_back(accept::BurnClocksLine(c));
  }
  return out;
}

}  // namespace gp::cli
