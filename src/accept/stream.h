// The measurement program's output read as it arrives (the protocol is in program.h): lines bounded, the
// running phase followed with gpuprep's own deadline for it, the phase records kept for the recording, and
// what went wrong (a phase past its deadline, a flood, an error the program reported, an end without
// "done") as findings. Runners (the host's python3, a container) feed it; it decides when they must stop.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "accept/program.h"

namespace gp::accept {

using SteadyClock = std::chrono::steady_clock;

// gpuprep's allowance per phase: the program's own measuring time (program_seconds) plus its setup, fixed
// per phase; past it the phase is a finding and the program is stopped. kStartAllowance covers starting
// the program (Python, PyTorch, CUDA, a worker per GPU; a container's start) up to its first phase, and
// kBetweenPhases the gap from one phase's end to the next one's start.
inline constexpr std::chrono::seconds kStartAllowance{60};
inline constexpr std::chrono::seconds kBetweenPhases{5};
// The seconds the program is asked to measure each phase for (--seconds).
double ProgramSeconds(bool fast);
// The burn's allowance past its own duration: the seeded operands made on the CPU and copied in, the
// CPU-checked product, the last chunk of products past the duration, and the barrier.
inline constexpr std::chrono::seconds kBurnSetup{120};
// `burn`: the burn's duration (0: no burn; the "burn" phase then has no allowance).
std::chrono::seconds PhaseBudget(const std::string& phase, bool fast,
                                 std::chrono::seconds burn = std::chrono::seconds(0));
// Every phase's budget, the start and the gaps: the longest a run may take.
std::chrono::seconds RunBudget(bool fast, std::chrono::seconds burn = std::chrono::seconds(0));
// The check across nodes: how long the program waits for every node to come (--rendezvous-seconds), which
// its one phase, all_reduce_nodes, includes; and the longest such a run may take.
inline constexpr std::chrono::seconds kRendezvous{300};
std::chrono::seconds NodesRunBudget(bool fast);
// NCCL's log lines kept per run (ProgramStream::KeepNcclLines), and the bytes kept of each.
inline constexpr size_t kMaxNcclLines = 20000;
inline constexpr size_t kMaxNcclLineBytes = 1000;

struct ProgramFinding {
  std::string phase;       // "" when not one phase
  std::optional<int> gpu;  // the GPU it names, if one
  std::string what;        // one line for the user (may hold the program's own words: escape before printing)
};

class ProgramStream : public ProgramSink {
 public:
  using Now = std::function<SteadyClock::time_point()>;
  // `gpus`: the GPUs the program measures (0 .. gpus-1); `fast`: which budgets apply.
  ProgramStream(
      int gpus, bool fast, Now now = [] { return SteadyClock::now(); });

  bool on_stdout(std::string_view chunk) override;
  void on_stderr(std::string_view chunk) override;
  std::optional<SteadyClock::time_point> deadline() const override;
  SteadyClock::time_point now() const override { return now_(); }

  // The burn's duration (the program's --burn-seconds), for its phase's allowance.
  void SetBurn(std::chrono::seconds burn) { burn_ = burn; }
  // Keeps NCCL's own log lines (those with "NCCL INFO" or "NCCL WARN") that the program writes on stderr
  // apart from the rest of it: printable ASCII, at most kMaxNcclLineBytes each, at most kMaxNcclLines.
  void KeepNcclLines() { keep_nccl_ = true; }
  const std::vector<std::string>& NcclLines() const { return nccl_lines_; }
  size_t NcclLinesDropped() const { return nccl_dropped_; }

  // After the program ended (its exit status, or -1 when gpuprep ended it): the findings of how it ended.
  void Finish(int exit_code);

  const std::vector<std::string>& PhaseLines() const { return phase_lines_; }
  const std::vector<ProgramFinding>& Findings() const { return findings_; }
  bool Done() const { return done_; }
  const std::string& Phase() const { return phase_; }  // the phase running now, "" between phases
  // The last lines the program wrote on stderr (bounded), for a message.
  std::string StderrTail(size_t lines = 3) const;
  // Called with each phase as it starts (for progress), and its allowance.
  std::function<void(const std::string& phase, std::chrono::seconds budget)> on_phase;

 private:
  bool Line(std::string_view line);
  void Add(std::string phase, std::optional<int> gpu, std::string what);
  void LongLine();                         // the finding for a line over kProgramLineMax
  void StderrLine(std::string_view line);  // one whole stderr line, when NCCL's lines are kept apart

  int gpus_;
  bool fast_;
  std::chrono::seconds burn_{0};
  Now now_;
  std::string partial_, stderr_, stderr_partial_;
  bool keep_nccl_ = false;
  std::vector<std::string> nccl_lines_;
  size_t nccl_dropped_ = 0;
  size_t total_ = 0;
  bool stopped_ = false, done_ = false, started_ = false;
  std::string phase_;
  std::set<int> reported_;  // GPUs with a record or an error in the running phase
  std::optional<SteadyClock::time_point> deadline_;
  std::vector<std::string> phase_lines_;
  std::vector<ProgramFinding> findings_;
  int unreadable_ = 0;
};

}  // namespace gp::accept
