// doctor --health: only the GPU health checks, as a table or JSON, in node-problem-detector's or Slurm's
// protocol (doctor/health.h), or as a node_exporter textfile (doctor/health_prom.h).
#pragma once
#include <string>
#include <vector>

#include "cli/context.h"

namespace gp::cli {

struct HealthOptions {
  bool npd = false;                  // --npd: exit 0/1/2 and one line of at most 80 bytes
  bool slurm = false;                // --slurm: drain this node through scontrol on a failure, exit 0
  std::string node;                  // --node NAME (--slurm; default: slurmd -C's NodeName)
  std::vector<std::string> classes;  // --class LIST (empty: every class)
  std::string since;                 // --since TIME: the Xid history from the journal (checked by doctor)
  std::string prometheus;            // --prometheus FILE: a node_exporter textfile (doctor/health_prom.h)
};

// Checks the flags against each other (FlagError, exit 2), then probes and judges. Returns the exit code.
int RunHealth(Context& ctx, const HealthOptions& o);

}  // namespace gp::cli
