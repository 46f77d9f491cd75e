// The measurement program's protocol, shared by its runners (the host's python3, or the stack's image
// through the Engine API) and the reader that turns its output into a recording (docs/json.md).
//
// The program (src/accept/program/measure.py, embedded) is started as
//   python3 -c PROGRAM --device cuda|cpu [--tiny] [--fast] --gpus N [--seconds S]
//                      [--allreduce-bytes B]... [--phases NAME,NAME...] [--burn-seconds D]
//                      [--nnodes N --node-rank R --master HOST:PORT --rendezvous-seconds S]
// with CUDA_DEVICE_ORDER=PCI_BUS_ID in its environment, so that CUDA's device i is NVML's GPU i. Its
// parent process never initialises CUDA: one worker process per GPU (forked) runs every phase, all GPUs at
// once, and the parent prints what the workers report.
//
// It writes one JSON object per line on stdout, in this order per phase:
//   {"record":"progress","phase":P,"state":"start","budget_s":S}   S: the seconds it means to measure
//   {"record":"phase","phase":P,...}                                  the docs/json.md phase records
//   {"record":"error","phase":P,"gpu":G|null,"message":TEXT}          a phase that failed on a GPU
//   {"record":"progress","phase":P,"state":"done"}
// and {"record":"done"} last. Phases: matmul_bf16, hbm_copy, h2d, d2h, p2p, all_reduce, burn; with --nnodes
// above 1 only all_reduce_nodes (every GPU of every node, the nodes meeting at --master). stderr is free text
// (warnings, a traceback, NCCL's own log: a worker's stdout is its stderr), kept bounded for the error
// message; NCCL's lines apart when the stream keeps them (ProgramStream::KeepNcclLines).
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace gp::accept {

// What a runner hands the program's output to, as it arrives. The runner stops the program (and ends its
// process group, or stops and removes its container) when on_stdout returns false (a bound was crossed) or
// when deadline() has passed.
class ProgramSink {
 public:
  virtual ~ProgramSink() = default;
  // A chunk of stdout, not split at lines. false: stop the program now.
  virtual bool on_stdout(std::string_view chunk) = 0;
  // A chunk of stderr.
  virtual void on_stderr(std::string_view chunk) = 0;
  // When the phase running now must have ended; nullopt while no phase runs.
  virtual std::optional<std::chrono::steady_clock::time_point> deadline() const = 0;
  // The clock deadline() is on (tests give the sink another).
  virtual std::chrono::steady_clock::time_point now() const { return std::chrono::steady_clock::now(); }
};

// gpuprep's bounds on the program's output.
inline constexpr size_t kProgramLineMax = size_t{64} * 1024;
inline constexpr size_t kProgramOutputMax = size_t{4} * 1024 * 1024;
inline constexpr size_t kProgramStderrMax = size_t{64} * 1024;

}  // namespace gp::accept
