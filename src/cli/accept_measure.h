// `gpuprep accept` measuring on the live host (--runtime host): the measurement program run with this host's
// python3, every GPU at once, its output streamed, bounded and deadlined, then composed with gpuprep's own
// view of the host into a recording that is judged as `--measurements` would judge it.
#pragma once
#include <chrono>
#include <optional>
#include <string>

#include "accept/judge.h"
#include "accept/record.h"
#include "accept/run_host.h"
#include "cli/context.h"
#include "cli/target.h"

namespace gp::cli {

struct Measured {
  std::string text;  // the recording (JSON Lines), as --save writes it
  accept::Recording recording;
  std::vector<accept::Check> program_checks;  // what went wrong while measuring, as failed checks
};

// What to measure: the phases' length (fast) and the burn's duration (0: none); or, with `nodes`, only the
// all-reduce across the nodes (`accept --nnodes`).
struct MeasurePlan {
  bool fast = false;
  std::chrono::seconds burn{0};
  std::optional<accept::NodesRun> nodes;
};

// Runs the program on this host (the gate has held) and returns the recording it made.
Measured MeasureOnHost(Context& ctx, const Target& t, const MeasurePlan& plan);
// Runs it in the stack's image through the Engine API (pulled first when missing), every GPU handed in.
Measured MeasureInContainer(Context& ctx, const Target& t, const MeasurePlan& plan);

}  // namespace gp::cli
