// gpuprep watch's own cost per sample (bench/watch.sh): the real NVML session over the stand-in
// libnvidia-ml.so.1 (which answers at once), the host side over the live /proc, the sample record built
// and serialised, and the judge, for `ticks` samples `spacing_ms` apart. The host sampler is handed the
// time of a 1 s interval per tick, so its periodic work (the process-table walk every 10 s, all threads
// every 5 s) comes as often as it would at 1 s. Prints the process's CPU time (all threads) per sample.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>
#include <vector>

#include "sys/clock.h"
#include "sys/fs.h"
#include "sys/nvml_session.h"
#include "watch/host.h"
#include "watch/jsonl.h"
#include "watch/judge.h"
#include "watch/sampler.h"

namespace {
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gp;
  const int ticks = argc > 1 ? std::atoi(argv[1]) : 100;
  const int spacing_ms = argc > 2 ? std::atoi(argv[2]) : 110;
  sys::DiskFs fs("/");
  sys::NvmlSessionOptions so;
  so.pid_visible = [&fs](unsigned pid) { return fs.Exists("/proc/" + std::to_string(pid)); };
  sys::NvmlOpenResult opened = sys::OpenNvmlSession(so);
  if (!opened.session) {
    std::fprintf(stderr, "watch_sampler: %s\n", opened.error.c_str());
    return 1;
  }
  std::vector<size_t> positions;
  for (size_t i = 0; i < opened.session->Gpus().size(); ++i) positions.push_back(i);
  watch::GpuSampler sampler(opened.session->Gpus());
  watch::HostSampler host(fs, {sys::ClockTicksPerSecond(), 10000, 5000});
  watch::Judge judge({}, 60000);
  size_t bytes = 0, host_processes = 0;
  std::vector<double> tick_cpu;
  double phase[4] = {0, 0, 0, 0};  // NVML read + convert, host, record, judge
  const double start = CpuSeconds();
  for (int t = 0; t < ticks; ++t) {
    const double t0 = CpuSeconds();
    watch::Sample s;
    s.time_ms = sys::UnixMillis();
    s.interval_ms = 1000;
    s.window_ms = 60000;
    auto readings =
        opened.session->Read(positions, std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
    s.gpus = sampler.Convert(readings);
    const double t1 = CpuSeconds();
    std::map<unsigned, std::vector<unsigned>> pids;
    for (const auto& g : s.gpus)
      if (g.processes)
        for (const auto& p : *g.processes) pids[p.pid].push_back(g.id.index);
    s.host = host.Sample(static_cast<long long>(t) * 1000, pids);
    const double t2 = CpuSeconds();
    bytes += watch::SampleJson(s).dump().size() + 1;
    const double t3 = CpuSeconds();
    host_processes = s.host.processes.size();
    judge.Add(s);
    const double t4 = CpuSeconds();
    phase[0] += t1 - t0;
    phase[1] += t2 - t1;
    phase[2] += t3 - t2;
    phase[3] += t4 - t3;
    tick_cpu.push_back(t4 - t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(spacing_ms));
  }
  const double total = CpuSeconds() - start;
  opened.session->Close();
  const double per_tick_ms = total / ticks * 1000;
  std::printf("gpus %zu, host processes followed %zu, samples %d\n", positions.size(), host_processes, ticks);
  std::printf("cpu per sample: %.3f ms (all threads, sleeps between samples included)\n", per_tick_ms);
  std::printf("share of one core at a 1 s interval: %.3f %%\n", per_tick_ms / 1000 * 100);
  std::printf("sample record: %.0f bytes per line\n", static_cast<double>(bytes) / ticks);
  std::printf(
      "per sample: NVML read %.3f ms, host %.3f ms, record %.3f ms, judge %.3f ms (the rest: idle threads)\n",
      phase[0] / ticks * 1000, phase[1] / ticks * 1000, phase[2] / ticks * 1000, phase[3] / ticks * 1000);
  return 0;
}
