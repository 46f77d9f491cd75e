// The measurement program's output as gpuprep reads it (accept/stream.h) and the host runner
// (accept/run_host.h): records kept, bounds, deadlines, and a stand-in python3 that replays, hangs or floods
// through the real process runner; the budgets within the run's time.
#include "accept/stream.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "accept/compose.h"
#include "accept/record.h"
#include "accept/run_host.h"
#include "apply/harness.h"
#include "sys/process.h"

using gp::accept::ProgramStream;
using gp::accept::SteadyClock;

namespace {

const char* kProgramRun =
    "{\"record\":\"progress\",\"phase\":\"matmul_bf16\",\"state\":\"start\",\"budget_s\":3}\n"
    "{\"record\":\"phase\",\"phase\":\"matmul_bf16\",\"gpu\":0,\"tflops\":790.1,\"m\":2048,\"n\":2048,"
    "\"k\":13312,\"duration_s\":0.01}\n"
    "{\"record\":\"phase\",\"phase\":\"matmul_bf16\",\"gpu\":1,\"tflops\":788.0,\"m\":2048,\"n\":2048,"
    "\"k\":13312,\"duration_s\":0.01}\n"
    "{\"record\":\"progress\",\"phase\":\"matmul_bf16\",\"state\":\"done\"}\n"
    "{\"record\":\"done\"}\n";

struct StreamClock {
  SteadyClock::time_point t = SteadyClock::time_point{} + std::chrono::hours(1);
  ProgramStream::Now Fn() {
    return [this] { return t; };
  }
};

}  // namespace

TEST_CASE("program stream: records kept across chunks split anywhere", "[accept][program]") {
  const std::string text = kProgramRun;
  for (size_t cut : {size_t{1}, size_t{7}, size_t{64}, text.size() - 1}) {
    ProgramStream s(2, true);
    REQUIRE(s.on_stdout(std::string_view(text).substr(0, cut)));
    REQUIRE(s.on_stdout(std::string_view(text).substr(cut)));
    s.Finish(0);
    CHECK(s.Done());
    CHECK(s.PhaseLines().size() == 2);
    CHECK(s.Findings().empty());
  }
}

TEST_CASE("program stream: a phase's deadline is gpuprep's budget, from its start", "[accept][program]") {
  StreamClock c;
  ProgramStream s(2, true, c.Fn());
  const auto start = c.t;
  REQUIRE(s.deadline());
  CHECK(*s.deadline() == start + gp::accept::kStartAllowance);
  std::string first = kProgramRun;
  first = first.substr(0, first.find('\n') + 1);
  c.t += std::chrono::seconds(5);
  REQUIRE(s.on_stdout(first));
  CHECK(s.Phase() == "matmul_bf16");
  CHECK(*s.deadline() == c.t + gp::accept::PhaseBudget("matmul_bf16", true));
  // It hangs: the runner ends it past the deadline; the finding names the phase and the GPUs without a
  // result.
  REQUIRE(s.on_stdout(
      "{\"record\":\"phase\",\"phase\":\"matmul_bf16\",\"gpu\":1,\"tflops\":788.0,\"m\":1,\"n\":1,\"k\":1,"
      "\"duration_s\":0.01}\n"));
  c.t += gp::accept::PhaseBudget("matmul_bf16", true) + std::chrono::seconds(1);
  s.Finish(-1);
  REQUIRE(s.Findings().size() == 1);
  CHECK(s.Findings()[0].phase == "matmul_bf16");
  CHECK(s.Findings()[0].what.find("no result from GPU 0") != std::string::npos);
  CHECK(s.Findings()[0].what.find("GPU 0, 1") == std::string::npos);
}

TEST_CASE("program stream: floods and long lines stop it", "[accept][program]") {
  SECTION("a line longer than the bound") {
    ProgramStream s(1, true);
    const std::string big(gp::accept::kProgramLineMax + 10, 'x');
    CHECK_FALSE(s.on_stdout(big));
    CHECK_FALSE(s.on_stdout("more\n"));
    s.Finish(-1);
    REQUIRE(s.Findings().size() == 1);
    CHECK(s.Findings()[0].what.find("longer than 64 KiB") != std::string::npos);
  }
  SECTION("more output than the bound, in short lines") {
    ProgramStream s(1, true);
    const std::string line = "{\"record\":\"noise\"}\n";
    bool ok = true;
    for (size_t sent = 0; ok && sent <= gp::accept::kProgramOutputMax + line.size(); sent += line.size())
      ok = s.on_stdout(line);
    CHECK_FALSE(ok);
    bool flood = false;
    for (const auto& f : s.Findings()) flood = flood || f.what.find("more than 4 MiB") != std::string::npos;
    CHECK(flood);
  }
}

TEST_CASE("program stream: errors, garbage and an early end are findings", "[accept][program]") {
  ProgramStream s(2, true);
  REQUIRE(
      s.on_stdout("not json\n{\"record\":\"error\",\"phase\":\"p2p\",\"gpu\":1,\"message\":\"to GPU 0: "
                  "CUDA error\"}\n"));
  s.on_stderr("Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n");
  s.Finish(1);
  REQUIRE(s.Findings().size() == 3);
  CHECK(s.Findings()[0].what.find("not a record") != std::string::npos);
  CHECK(s.Findings()[1].gpu == 1);
  CHECK(s.Findings()[1].what.find("CUDA error") != std::string::npos);
  CHECK(s.Findings()[2].what.find("exit status 1") != std::string::npos);
  CHECK(s.Findings()[2].what.find("out of memory") != std::string::npos);
}

TEST_CASE("program budgets: --fast within 300 s, the default within 900 s", "[accept][program]") {
  using std::chrono::seconds;
  // A container's start is inside kStartAllowance (the first phase must begin within it).
  CHECK(gp::accept::RunBudget(true) <= seconds(300));
  CHECK(gp::accept::RunBudget(false) <= seconds(900));
  for (const char* p : {"matmul_bf16", "hbm_copy", "h2d", "d2h", "p2p", "all_reduce"}) {
    CHECK(gp::accept::PhaseBudget(p, true) > seconds(static_cast<int>(gp::accept::ProgramSeconds(true))));
    CHECK(gp::accept::PhaseBudget(p, false) >= gp::accept::PhaseBudget(p, true));
  }
  CHECK(gp::accept::PhaseBudget("burn", true) == seconds(0));
}

TEST_CASE("program argv: the embedded program, CUDA's order as NVML's", "[accept][program]") {
  const auto argv = gp::accept::ProgramArgv("python3", 8, true, {8589934592ull, 17179869184ull});
  REQUIRE(argv.size() >= 3);
  CHECK(argv[1] == "-c");
  CHECK(argv[2].find("def worker_main") != std::string::npos);
  CHECK(std::find(argv.begin(), argv.end(), "--fast") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "17179869184") != argv.end());
  CHECK(gp::accept::ProgramEnv().at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  // The embedded copy is the source tree's.
  std::ifstream f(std::string(GP_SOURCE_DIR) + "/src/accept/program/measure.py");
  const std::string src((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(gp::accept::MeasureProgram() == src);
}

namespace {
// A stand-in for python3: a shell script that ignores its arguments and runs `body`.
std::string PythonStandIn(const gp::test::TempRoot& root, const std::string& body) {
  const std::string path = root.path() + "/python3";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}
}  // namespace

TEST_CASE("host runner: a replayed run, a hang and a flood through the real process runner",
          "[accept][program]") {
  gp::test::TempRoot root;
  gp::sys::RealCommandRunner runner;
  SECTION("a recorded run is read as it comes") {
    std::ofstream(root.path() + "/run.jsonl") << kProgramRun;
    const std::string py = PythonStandIn(root, "cat '" + root.path() + "/run.jsonl'");
    ProgramStream s(2, true);
    auto end = gp::accept::RunOnHost(runner, {py}, {}, s, std::chrono::seconds(30));
    CHECK(end.started);
    CHECK(end.exit_code == 0);
    CHECK(s.Done());
    CHECK(s.PhaseLines().size() == 2);
    CHECK(s.Findings().empty());
  }
  SECTION("a phase that hangs is ended at its deadline, its process group with it") {
    const std::string py = PythonStandIn(root, "head -n 2 '" + root.path() + "/run.jsonl'; sleep 299 & wait");
    std::ofstream(root.path() + "/run.jsonl") << kProgramRun;
    // The stream's clock jumps 44 s when the phase starts: its 45 s budget ends a second later.
    auto offset = std::make_shared<std::chrono::seconds>(0);
    ProgramStream s(2, true, [offset] { return SteadyClock::now() + *offset; });
    s.on_phase = [offset](const std::string&, std::chrono::seconds budget) {
      *offset = budget - std::chrono::seconds(1);
    };
    const auto t0 = SteadyClock::now();
    auto end = gp::accept::RunOnHost(runner, {py}, {}, s, std::chrono::seconds(60));
    CHECK(SteadyClock::now() - t0 < std::chrono::seconds(15));
    CHECK(end.stopped);
    REQUIRE(s.Findings().size() == 1);
    CHECK(s.Findings()[0].what.find("did not finish within its 45 s (no result from GPU 1)") !=
          std::string::npos);
    CHECK(::system("pgrep -f '[s]leep 299' >/dev/null") != 0);
  }
  SECTION("a flood is cut at the bound") {
    const std::string py = PythonStandIn(root, "yes '{\"record\":\"noise\"}'");
    ProgramStream s(1, true);
    auto end = gp::accept::RunOnHost(runner, {py}, {}, s, std::chrono::seconds(60));
    CHECK(end.stopped);
    REQUIRE_FALSE(s.Findings().empty());
    CHECK(s.Findings().back().what.find("more than 4 MiB") != std::string::npos);
  }
  SECTION("no python3") {
    ProgramStream s(1, true);
    auto end = gp::accept::RunOnHost(runner, {root.path() + "/missing"}, {}, s, std::chrono::seconds(5));
    CHECK_FALSE(end.started);
    CHECK(end.error.find("was not found") != std::string::npos);
  }
}

TEST_CASE("composed recording: the host's records and the program's, read back as a recording",
          "[accept][program]") {
  gp::accept::HostRun run;
  run.started_at = "2026-12-04T12:00:00Z";
  run.finished_at = "2026-12-04T12:03:00Z";
  run.host = "h200";
  run.driver_version = "580.159.04";
  run.topology = "pcie";
  run.cpus = 16;
  run.ram_bytes = 135000000000ull;
  gp::accept::HostGpu g;
  g.uuid = "GPU-e65b10e7";
  g.serial = "1654024074412";
  g.name = "H200";
  g.pci_device_id = "0x2335";
  g.memory_total_mib = 143771;
  g.pcie_max_gen = gp::accept::PcieGen(32.0);
  g.pcie_max_width = 16;
  CHECK(g.pcie_max_gen == 5);
  const std::string text = gp::accept::ComposeRecording(
      run, {g},
      {"{\"record\":\"phase\",\"phase\":\"hbm_copy\",\"gpu\":0,\"tb_per_s\":4.25,\"bytes\":2147483648,"
       "\"duration_s\":2.98}"});
  const auto rec = gp::accept::ParseRecording(text, "composed");
  CHECK(rec.gpus.size() == 1);
  CHECK(rec.phases.size() == 1);
  CHECK(rec.run.topology == "pcie");
}
