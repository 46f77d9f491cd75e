// doctor --health's test kit: the health fixture trees read as a live host whose NVML answers per bus id
// (a stand-in for NativeLibs::Nvml, shaped like its answers), and gpuprep run on them through RunCli.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/context.h"
#include "support/fakes.h"
#include "sys/fs.h"

namespace gp::test {

inline std::string HealthFixture(const std::string& name) {
  return std::string(GP_FIXTURES) + "/health/" + name;
}

// NVML as the driver answers it: per bus id, a status and the health it read.
class HealthNvml : public sys::NativeLibs {
 public:
  sys::LibCall CudaRuntimeVersion(const std::vector<std::string>&) override { return {}; }
  sys::LibCall CudnnVersion(const std::vector<std::string>&) override { return {}; }
  sys::LibCall NcclVersion(const std::vector<std::string>&) override { return {}; }
  sys::NvmlInfo Nvml(const std::vector<std::string>& bus_ids) override {
    sys::NvmlInfo r;
    r.loaded = loaded;
    if (!loaded) return r;
    r.device_count = static_cast<long>(bus_ids.size());
    for (const auto& id : bus_ids) {
      auto it = answers.find(id);
      sys::NvmlBusAnswer a{id, 0, Healthy()};
      if (it != answers.end()) a = it->second;
      r.buses.push_back(a);
    }
    return r;
  }
  sys::CudaDriverInfo CudaDriver() override { return {}; }
  static sys::NvmlHealth Healthy() {
    sys::NvmlHealth h;
    h.pstate = 0;
    h.remap_pending = false;
    h.remap_failure = false;
    h.ecc_enabled = true;
    h.ecc_volatile_uncorrected = 0;
    h.ecc_aggregate_uncorrected = 0;
    h.recovery_action = 0;
    h.clock_reasons = 0;
    h.power_limit_mw = 700000;
    h.power_default_mw = 700000;
    h.persistence = true;
    h.nvlinks = 18;
    return h;
  }
  bool loaded = true;
  std::map<std::string, sys::NvmlBusAnswer> answers;
};

struct HealthRun {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

// gpuprep ARGS on fixture tree `tree` seen as the live host (or under --root when ARGS say so).
inline HealthRun RunOn(const std::string& tree, std::vector<std::string> args, HealthNvml* nvml,
                       test::FakeCommandRunner* runner) {
  std::ostringstream out, err;
  sys::DiskFs local("/");
  cli::Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.local_fs = &local;
  ctx.native = nvml;
  ctx.runner = runner;
  const std::string dir = HealthFixture(tree);
  ctx.make_fs = [dir](const std::string& root) -> std::unique_ptr<sys::Fs> {
    if (!root.empty()) return std::make_unique<sys::DiskFs>(root);
    return std::make_unique<LiveDiskFs>(dir);
  };
  args.insert(args.begin(), "gpuprep");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  HealthRun r;
  const auto t0 = std::chrono::steady_clock::now();
  r.code = cli::RunCli(static_cast<int>(argv.size()), argv.data(), ctx);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Every health fault NVML can report, one per GPU of the 4-GPU tree (gen5-in-gen4: no bus fault of its own).
inline HealthNvml EveryFault() {
  HealthNvml n;
  sys::NvmlBusAnswer lost{"0000:18:00.0", 15, {}};  // NVML_ERROR_GPU_IS_LOST
  sys::NvmlBusAnswer memory{"0000:2a:00.0", 0, HealthNvml::Healthy()};
  memory.health.remap_failure = true;
  memory.health.ecc_volatile_uncorrected = 3;
  sys::NvmlBusAnswer clocks{"0000:ab:00.0", 0, HealthNvml::Healthy()};
  clocks.health.clock_reasons = 0x80;  // hardware power brake
  clocks.health.nvlinks_down = {3};
  sys::NvmlBusAnswer reboot{"0000:db:00.0", 0, HealthNvml::Healthy()};
  reboot.health.recovery_action = 2;  // node reboot
  n.answers = {{lost.pci, lost}, {memory.pci, memory}, {clocks.pci, clocks}, {reboot.pci, reboot}};
  return n;
}

}  // namespace gp::test
