// The measurement program (program/measure.py, embedded) and how it is started: its argv and environment,
// the all-reduce message sizes the expectation table measured at, and the host runner (--runtime host),
// which streams the program's output into a ProgramStream through the command seam and ends its process
// group at the stream's deadline or bound.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "accept/stream.h"
#include "accept/table.h"
#include "sys/process.h"

namespace gp::accept {

std::string_view MeasureProgram();  // the program's source, as embedded

// The all-reduce message sizes the table's rows for this board were measured at (typical and floor),
// smallest first; 1 GiB when the board has none (the result is then reported without an expectation).
std::vector<uint64_t> AllReduceSizes(const Table& table, const std::string& device, int gpus,
                                     const std::string& topology);

// `python -c PROGRAM --device cuda --gpus N [--fast] --seconds S --allreduce-bytes B... [--burn-seconds D]`
// (`burn` 0: no burn).
std::vector<std::string> ProgramArgv(const std::string& python, int gpus, bool fast,
                                     const std::vector<uint64_t>& allreduce_bytes,
                                     std::chrono::seconds burn = std::chrono::seconds(0));
// The check across nodes (`accept --nnodes`): how many nodes, which one this is, and where they meet.
struct NodesRun {
  int nnodes = 0;
  int node_rank = 0;
  std::string master;  // "HOST:PORT" ("[v6]:PORT")
};
// The message the all-reduce across nodes moves: large enough that the bus bandwidth is on its plateau, as
// Azure's health checks measure their all-reduce floors at 8 and 16 GiB.
inline constexpr uint64_t kNodesMessageBytes = uint64_t{8} << 30;
// `python -c PROGRAM --device cuda --gpus N [--fast] --seconds S --phases all_reduce_nodes --nnodes N
// --node-rank R --master HOST:PORT --rendezvous-seconds 300 --allreduce-bytes 8589934592`.
std::vector<std::string> NodesProgramArgv(const std::string& python, int gpus, bool fast,
                                          const NodesRun& nodes);

// CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's device i is NVML's GPU i), PYTHONUNBUFFERED=1 (lines as they come);
// with a burn also CUBLAS_WORKSPACE_CONFIG=:4096:8, cuBLAS's condition for bit-wise reproducible products
// (its documentation, "Results reproducibility"), set before the program's first CUDA call.
std::map<std::string, std::string> ProgramEnv(bool burn = false);

// What both runners hand the program's output to (fd 1 stdout, 2 stderr) and ask whether it may go on:
// the sink's bounds, its phase deadline, `until` (the run's limit) and `interrupted` (Ctrl-C).
std::function<bool(int fd, std::string_view chunk)> FeedSink(ProgramSink& sink);
std::function<bool()> KeepRunning(const ProgramSink& sink, SteadyClock::time_point until,
                                  const std::function<bool()>& interrupted);

struct ProgramEnd {
  bool started = false;
  int exit_code = -1;        // -1 when gpuprep ended it
  bool stopped = false;      // ended by gpuprep: a deadline, a bound, or the run's limit
  std::string error;         // why it did not start
  bool interrupted = false;  // stopped because the user asked (Ctrl-C, SIGTERM)
  std::string left;          // a container that could not be removed (its id), "" when none
};

// Runs `argv` on this host, its output into `stream`; at most `limit` in all; `interrupted` (Ctrl-C)
// ends it too. Calls stream.Finish.
ProgramEnd RunOnHost(sys::CommandRunner& runner, const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env, ProgramStream& stream,
                     std::chrono::seconds limit, const std::function<bool()>& interrupted = {});

}  // namespace gp::accept
