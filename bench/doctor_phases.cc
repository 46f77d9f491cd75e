// Where a `gpuprep doctor --json` run spends its time, phase by phase, in one process (bench/README.md).
// Each phase runs once, in doctor's order, as a cold process would; then the median of `rounds` repeats of
// the warm (cached) pipeline. Usage: doctor_phases [ROOT] (default: the live host).
// GPUPREP_BENCH_NVML_DIR=DIR loads libnvidia-ml.so.1 from DIR for the last line, the GPU health reads: the
// median over 20 rounds of one NVML call asking for every GPU by bus id, less the same call asking for none
// (tests/watch/standin with GPUPREP_STANDIN_TRACE on a machine without a GPU; the driver's own on one with).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "doctor/report.h"
#include "layers/check.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/process.h"
#include "verdict/rules.h"

namespace {
using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double MedianMs(gp::sys::NativeLibs& native, const std::vector<std::string>& bus_ids) {
  std::vector<double> runs;
  for (int i = 0; i < 20; ++i) {
    auto a = Clock::now();
    native.Nvml(bus_ids);
    runs.push_back(Ms(a, Clock::now()));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// The milliseconds the health reads add to the probe's NVML call, for every GPU NVML lists.
void HealthReads() {
  const char* dir = std::getenv("GPUPREP_BENCH_NVML_DIR");
  gp::sys::DlopenNativeLibs native(dir ? dir : "");
  gp::sys::NvmlInfo info = native.Nvml({});
  if (!info.loaded || info.devices.empty()) {
    std::printf("GPU health reads      (no NVML with GPUs: %s)\n", info.error.c_str());
    return;
  }
  std::vector<std::string> bus_ids;
  for (const auto& d : info.devices) bus_ids.push_back(d.pci);
  const double none = MedianMs(native, {});
  const double all = MedianMs(native, bus_ids);
  std::printf("GPU health reads      %6.2f ms  (%zu GPUs; NVML call %.2f ms with them, %.2f ms without)\n",
              all - none, bus_ids.size(), all, none);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace gp;
  std::string root = argc > 1 ? argv[1] : "";
  auto t0 = Clock::now();
  const manifest::Compat& compat = manifest::EmbeddedHostCompat();
  auto t1 = Clock::now();
  sys::DiskFs fs(root.empty() ? "/" : root);
  sys::RealCommandRunner runner;
  sys::DlopenNativeLibs native;
  sys::RealUnixHttp http;
  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = root.empty() ? &runner : nullptr;
  env.native = root.empty() ? &native : nullptr;
  env.docker = root.empty() ? &http : nullptr;
  env.compat = &compat;
  probe::HostFacts host = probe::ProbeHost(env);
  auto t2 = Clock::now();
  auto choice = manifest::ChooseDefaultStack(verdict::HostQueryFor(compat, host));
  auto t3 = Clock::now();
  sys::DiskFs local("/");
  manifest::Stack stack = manifest::LoadStack(choice.name, {&local, nullptr});
  auto t4 = Clock::now();
  auto reports = layers::CheckAll({stack, compat, host});
  auto t5 = Clock::now();
  std::string out = doctor::ReportJson(stack.name, host, reports).dump(2);
  auto t6 = Clock::now();
  // What doctor no longer does, for comparison: the whole catalogue decoded, and every embedded stack built.
  manifest::EmbeddedCompat();
  auto t7 = Clock::now();
  size_t stacks = 0;
  for (const std::string& name : manifest::EmbeddedStackNames()) {
    manifest::LoadStack(name, {&local, nullptr});
    ++stacks;
  }
  auto t8 = Clock::now();
  std::printf("compat facts          %6.2f ms  (the catalogue rows of this host's PCI ids)\n", Ms(t0, t1));
  std::printf("host probe            %6.2f ms\n", Ms(t1, t2));
  std::printf("default stack choice  %6.2f ms  (builds the stacks that may be chosen)\n", Ms(t2, t3));
  std::printf("load chosen stack     %6.2f ms  (%s)\n", Ms(t3, t4), choice.name.c_str());
  std::printf("layer checks          %6.2f ms\n", Ms(t4, t5));
  std::printf("JSON report           %6.2f ms  (%zu bytes)\n", Ms(t5, t6), out.size());
  std::printf("total in main         %6.2f ms\n", Ms(t0, t6));
  std::printf("not done by doctor:   %6.2f ms  the whole catalogue decoded (EmbeddedCompat)\n", Ms(t6, t7));
  std::printf("                      %6.2f ms  the other embedded stacks built (%zu in all)\n", Ms(t7, t8),
              stacks);
  HealthReads();
  return 0;
}
