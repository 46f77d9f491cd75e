// `gpuprep accept`'s burn seen by watch's sampler: while the measurement program burns, every GPU is read
// through NVML once a second on a thread of its own (clocks, power, clock-event reasons), the kernel log is
// followed for the Xid events the driver logs meanwhile (as watch follows it: watch/xid.h), and when the
// run ends each GPU's readings and events become its burn_clocks record (accept/burn_sample.h).
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accept/record.h"
#include "cli/context.h"
#include "sys/kernel_log.h"
#include "watch/sample.h"

namespace gp::cli {

class BurnSampler {
 public:
  // `gpus`: the GPUs measured (NVML's first `gpus`). Opens NVML through ctx.open_nvml; without it, or
  // when NVML does not open or counts fewer GPUs, nothing is read and Error() says why.
  BurnSampler(Context& ctx, int gpus);
  ~BurnSampler();
  BurnSampler(const BurnSampler&) = delete;
  BurnSampler& operator=(const BurnSampler&) = delete;

  void Burning();  // the burn started: read from now on
  void Stop();     // the run ended: stop reading (joins the thread)
  // One burn_clocks line per GPU read at least once (after Stop).
  std::vector<std::string> Lines() const;
  const std::string& Error() const { return error_; }

 private:
  void Loop();

  int gpus_;
  std::string error_;
  std::unique_ptr<sys::NvmlSession> session_;
  std::vector<std::vector<watch::GpuSample>> samples_;
  std::vector<std::vector<accept::BurnXid>> xids_;
  sys::KmsgFollower kernel_log_;
  std::atomic<bool> burning_{false};
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace gp::cli
