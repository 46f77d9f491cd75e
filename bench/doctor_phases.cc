// Where a `gpuprep doctor --json` run spends its time, phase by phase, in one process (bench/README.md).
// Each phase runs once, in doctor's order, as a cold process would; then the median of `rounds` repeats of
// the warm (cached) pipeline. Usage: doctor_phases [ROOT] (default: the live host).
#include <chrono>
#include <cstdio>
#include <string>

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
}  // namespace

int main(int argc, char** argv) {
  using namespace gp;
  std::string root = argc > 1 ? argv[1] : "";
  auto t0 = Clock::now();
  const manifest::Compat& compat = manifest::EmbeddedCompat();
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
  std::printf("compat.yaml parse     %6.2f ms\n", Ms(t0, t1));
  std::printf("host probe            %6.2f ms\n", Ms(t1, t2));
  std::printf("default stack choice  %6.2f ms  (parses every embedded stack)\n", Ms(t2, t3));
  std::printf("load chosen stack     %6.2f ms  (%s)\n", Ms(t3, t4), choice.name.c_str());
  std::printf("layer checks          %6.2f ms\n", Ms(t4, t5));
  std::printf("JSON report           %6.2f ms  (%zu bytes)\n", Ms(t5, t6), out.size());
  std::printf("total in main         %6.2f ms\n", Ms(t0, t6));
  return 0;
}
