// The embedded measurement program itself, under a real PyTorch on the CPU (--device cpu --tiny: every
// phase's code, two workers, gloo's all-reduce), read by gpuprep's own stream reader and recording parser:
// every record it prints is held to the contract. Hidden ([.]): tests/integration/accept_program_cpu.sh runs
// it with GPUPREP_TORCH_PYTHON set to a python3 that imports torch, and skips where there is none.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "accept/compose.h"
#include "accept/judge.h"
#include "accept/record.h"
#include "accept/run_host.h"
#include "accept/stream.h"
#include "sys/process.h"

TEST_CASE("the embedded program on the CPU: every phase, read back as a recording", "[.][torch]") {
  const char* python = std::getenv("GPUPREP_TORCH_PYTHON");
  REQUIRE(python != nullptr);
  auto argv = gp::accept::ProgramArgv(python, 2, true, {4096, 65536});
  for (auto& a : argv)
    if (a == "cuda") a = "cpu";
  argv.push_back("--tiny");
  gp::sys::RealCommandRunner runner;
  gp::accept::ProgramStream stream(2, true);
  auto env = gp::accept::ProgramEnv();
  env["OMP_NUM_THREADS"] = "1";
  const auto end = gp::accept::RunOnHost(runner, argv, env, stream, std::chrono::seconds(120));
  INFO(stream.StderrTail(10));
  REQUIRE(end.started);
  CHECK(end.exit_code == 0);
  CHECK(stream.Done());
  for (const auto& f : stream.Findings()) FAIL_CHECK(f.phase << ": " << f.what);
  // matmul, HBM, host to device and back on each of 2 workers, a peer copy each way, 2 all-reduce sizes.
  CHECK(stream.PhaseLines().size() == 4 * 2 + 2 + 2);

  gp::accept::HostRun run;
  run.started_at = run.finished_at = "2026-12-04T12:00:00Z";
  run.host = "cpu";
  run.driver_version = "none";
  run.topology = "pcie";
  run.cpus = 2;
  run.ram_bytes = 1ull << 30;
  std::vector<gp::accept::HostGpu> gpus(2);
  for (int i = 0; i < 2; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = "GPU-cpu-" + std::to_string(i);
    gpus[i].serial = "0";
    gpus[i].name = "CPU";
    gpus[i].pci_device_id = "0x0000";
    gpus[i].memory_total_mib = 1024;
    gpus[i].pcie_max_gen = 5;
    gpus[i].pcie_max_width = 16;
  }
  const std::string text = gp::accept::ComposeRecording(run, gpus, stream.PhaseLines());
  const auto rec = gp::accept::ParseRecording(text, "cpu-run");  // throws FILE:LINE:COL on any bad record
  CHECK(rec.phases.size() == stream.PhaseLines().size());
  int all_reduce = 0;
  for (const auto& p : rec.phases) {
    CHECK(p.value > 0);
    CHECK(p.duration_s > 0);
    if (p.phase == "all_reduce") {
      ++all_reduce;
      CHECK(p.peer == 2);  // two took part
    }
  }
  CHECK(all_reduce == 2);
}
