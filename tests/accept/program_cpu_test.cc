// The embedded measurement program itself, under a real PyTorch on the CPU (--device cpu --tiny: every
// phase's code, two workers, gloo's all-reduce), read by gpuprep's own stream reader and recording parser:
// every record it prints is held to the contract. Hidden ([.]): tests/integration/accept_program_cpu.sh runs
// it with GPUPREP_TORCH_PYTHON set to a python3 that imports torch, and skips where there is none.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <thread>

#include "accept/burn.h"
#include "accept/compose.h"
#include "accept/judge.h"
#include "accept/record.h"
#include "accept/run_host.h"
#include "accept/stream.h"
#include "sys/process.h"

namespace {

// The run and gpu records of two CPU "GPUs", as the recording around the program's records.
std::string CpuRecording(const std::vector<std::string>& phase_lines) {
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
  return gp::accept::ComposeRecording(run, gpus, phase_lines);
}

// The program's burn alone on two CPU workers for a second, `plant` passed as --plant-flip when not empty.
gp::accept::Recording CpuBurn(const char* python, const std::string& plant) {
  auto argv = gp::accept::ProgramArgv(python, 2, true, {}, std::chrono::seconds(1));
  for (auto& a : argv)
    if (a == "cuda") a = "cpu";
  argv.insert(argv.end(), {"--tiny", "--phases", "burn"});
  if (!plant.empty()) argv.insert(argv.end(), {"--plant-flip", plant});
  gp::sys::RealCommandRunner runner;
  gp::accept::ProgramStream stream(2, true);
  stream.SetBurn(std::chrono::seconds(1));
  auto env = gp::accept::ProgramEnv(true);
  env["OMP_NUM_THREADS"] = "1";
  const auto end = gp::accept::RunOnHost(runner, argv, env, stream, std::chrono::seconds(120));
  INFO(stream.StderrTail(10));
  REQUIRE(end.started);
  CHECK(end.exit_code == 0);
  for (const auto& f : stream.Findings()) FAIL_CHECK(f.phase << ": " << f.what);
  REQUIRE(stream.PhaseLines().size() == 2);
  return gp::accept::ParseRecording(CpuRecording(stream.PhaseLines()), "cpu-burn");
}

gp::accept::Status StatusOf(const std::vector<gp::accept::Check>& cs, const std::string& name, int gpu,
                            std::string* reason = nullptr) {
  for (const auto& c : cs)
    if (c.name == name && c.gpu == gpu) {
      if (reason) *reason = c.reason;
      return c.status;
    }
  FAIL("no " << name << " check for GPU " << gpu);
  return gp::accept::Status::kSkipped;
}

}  // namespace

TEST_CASE("the embedded program's burn on the CPU: two workers agree, a planted bit flip is caught",
          "[.][torch]") {
  const char* python = std::getenv("GPUPREP_TORCH_PYTHON");
  REQUIRE(python != nullptr);
  using gp::accept::Status;
  std::string reason;

  const auto healthy = gp::accept::BurnChecks(CpuBurn(python, ""));
  REQUIRE(healthy.size() == 4);
  for (const auto& c : healthy) CHECK(c.status == Status::kPass);

  // A bit of worker 1's product flipped at iteration 5: it differs from its own first product there.
  const auto rec = CpuBurn(python, "1:5");
  CHECK(rec.burns[0].digest == rec.burns[1].digest);
  const auto flipped = gp::accept::BurnChecks(rec);
  CHECK(StatusOf(flipped, "digest", 0) == Status::kPass);
  CHECK(StatusOf(flipped, "digest", 1, &reason) == Status::kFail);
  CHECK(reason.find("at iteration 5 ") != std::string::npos);

  // Flipped in worker 0's first product: it disagrees with itself from iteration 1, and with worker 1.
  const auto first = gp::accept::BurnChecks(CpuBurn(python, "0:0"));
  CHECK(StatusOf(first, "digest", 0, &reason) == Status::kFail);
  CHECK(reason.find("at iteration 1 ") != std::string::npos);
  CHECK(StatusOf(first, "digest", 1) == Status::kPass);

  // Flipped in worker 1's CPU-checked product.
  const auto check = gp::accept::BurnChecks(CpuBurn(python, "1:check"));
  CHECK(StatusOf(check, "cpu check", 1, &reason) == Status::kFail);
  CHECK(reason.find("1 of 4096 values") != std::string::npos);
  CHECK(StatusOf(check, "cpu check", 0) == Status::kPass);
}

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

  const std::string text = CpuRecording(stream.PhaseLines());
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

namespace {

// A TCP port on the loopback nothing listens on now (the kernel's choice for a socket bound to port 0).
std::string FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return std::to_string(ntohs(a.sin_port));
}

// One node of the check across nodes on the CPU (two workers, gloo): the program's argv with a tiny message,
// `rendezvous` the seconds it waits for the other nodes.
struct CpuNode {
  gp::accept::ProgramStream stream{2, true};
  gp::accept::ProgramEnd end;
  void Run(const char* python, int rank, const std::string& master, const char* rendezvous) {
    gp::accept::NodesRun n{2, rank, master};
    auto argv = gp::accept::NodesProgramArgv(python, 2, true, n);
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--device") argv[i + 1] = "cpu";
      if (argv[i] == "--allreduce-bytes") argv[i + 1] = "4096";
      if (argv[i] == "--rendezvous-seconds") argv[i + 1] = rendezvous;
    }
    argv.push_back("--tiny");
    stream.KeepNcclLines();
    auto env = gp::accept::ProgramEnv();
    env["OMP_NUM_THREADS"] = "1";
    gp::sys::RealCommandRunner runner;
    end = gp::accept::RunOnHost(runner, argv, env, stream, std::chrono::seconds(180));
  }
};

}  // namespace

TEST_CASE("the embedded program across two nodes on the CPU: one all-reduce over both nodes' workers",
          "[.][torch]") {
  const char* python = std::getenv("GPUPREP_TORCH_PYTHON");
  REQUIRE(python != nullptr);
  const std::string master = "127.0.0.1:" + FreePort();
  CpuNode node0, node1;
  std::thread other([&] { node1.Run(python, 1, master, "60"); });
  node0.Run(python, 0, master, "60");
  other.join();
  for (CpuNode* node : {&node0, &node1}) {
    INFO(node->stream.StderrTail(10));
    REQUIRE(node->end.started);
    CHECK(node->end.exit_code == 0);
    for (const auto& f : node->stream.Findings()) FAIL_CHECK(f.phase << ": " << f.what);
    REQUIRE(node->stream.PhaseLines().size() == 1);
    gp::accept::NodesInfo info;
    info.nnodes = 2;
    info.master = master;
    std::vector<std::string> lines = node->stream.PhaseLines();
    for (auto& l : gp::accept::NodesLines(info, node->stream.NcclLines())) lines.push_back(l);
    const auto rec = gp::accept::ParseRecording(CpuRecording(lines), "cpu-nodes");
    REQUIRE(rec.phases.size() == 1);
    CHECK(rec.phases[0].phase == "all_reduce_nodes");
    CHECK(rec.phases[0].nodes == 2);
    CHECK(rec.phases[0].peer == 4);  // both nodes' two workers
    CHECK(rec.phases[0].value > 0);
  }
}

TEST_CASE("the embedded program across nodes: a node alone fails the phase after its rendezvous wait",
          "[.][torch]") {
  const char* python = std::getenv("GPUPREP_TORCH_PYTHON");
  REQUIRE(python != nullptr);
  CpuNode node1;  // node 0, where the nodes meet, never comes
  node1.Run(python, 1, "127.0.0.1:" + FreePort(), "3");
  INFO(node1.stream.StderrTail(10));
  REQUIRE(node1.end.started);
  CHECK(node1.stream.Done());
  CHECK(node1.stream.PhaseLines().empty());
  REQUIRE_FALSE(node1.stream.Findings().empty());
  const auto& f = node1.stream.Findings().front();
  CHECK(f.phase == "all_reduce_nodes");
  CHECK(f.what.find("did not all meet") != std::string::npos);
}
