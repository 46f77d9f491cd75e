// doctor --health in the protocols clusters use to take a sick node out of service: node-problem-detector's
// custom plugins (an exit code and one short line) and Slurm's HealthCheckProgram (the program drains the
// node itself). Pure functions of the health reports (layers::CheckHealthOnly) and the probed host.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "probe/host.h"
#include "verdict/report.h"

namespace gp::doctor {

// The health classes, in the order docs list them: bus (on the bus, NVML's answer, the PCIe link), memory
// (row remapping, retired pages, ECC), clocks (hardware slowdowns, the power limit), nvlink, xid (the
// kernel log's Xid events), recovery (the driver's recovery action).
const std::vector<std::string>& HealthClasses();
// The class of a finding's code; "" for a code that is no health finding (gpu.found, driver.recovery-none).
std::string HealthClass(const std::string& code);
// Whether `cls` is among `classes` (--class; empty: every class). Never for "".
bool HealthClassChosen(const std::vector<std::string>& classes, const std::string& cls);

struct HealthVerdict {
  enum class Kind { kOk, kProblem, kUnknown };
  Kind kind = Kind::kOk;
  std::vector<verdict::Finding> failures;  // failed health findings of the chosen classes, in report order
  std::vector<verdict::Finding> warnings;  // the same for warnings
  std::string unknown_why;                 // what could not be read (kUnknown)
  std::vector<std::string> unread;         // the chosen classes that could not be read, in class order
  size_t gpus = 0;
};

// Judges the reports for `classes` (empty: every class). A failure is a problem. Otherwise the verdict is
// unknown when a chosen class could not be read: on the live host NVML answered for no GPU (bus, memory,
// clocks, nvlink, recovery), or the kernel log was not read (xid). Under --root the tree's files are all
// there is to read, and they are judged.
HealthVerdict JudgeHealth(const std::vector<verdict::LayerReport>& reports, const probe::HostFacts& host,
                          const std::vector<std::string>& classes);

// node-problem-detector: 0 OK, 1 a problem, 2 unknown.
int NpdExitCode(const HealthVerdict& v);
// One line of printable ASCII, at most `max_bytes` (NPD's default max_output_length is 80): the first
// failure's code and message and how many more, or what could not be read, or the healthy count.
std::string NpdLine(const HealthVerdict& v, size_t max_bytes = 80);

// A Slurm node name gpuprep passes to scontrol: a letter or digit, then letters, digits, '.', '_', '-';
// at most 64 bytes.
bool ValidSlurmNodeName(const std::string& name);
// The NodeName of `slurmd -C`'s first line ("NodeName=gpu01 CPUs=..."); nullopt when there is none.
std::optional<std::string> SlurmdNodeName(const std::string& slurmd_output);
// The reason a drained node carries: "gpuprep: CODE MESSAGE (+N more)", printable ASCII, at most 160 bytes.
std::string SlurmReason(const HealthVerdict& v);
// scontrol's argv that drains `node` with that reason; nullopt when the verdict is ok.
std::optional<std::vector<std::string>> SlurmDrainArgv(const HealthVerdict& v, const std::string& node);

}  // namespace gp::doctor
