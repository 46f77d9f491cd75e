// Builds the plan (plan/plan.h) from a stack and a probed host: per layer check -> install -> verify,
// containing only what is missing. Pure: reads through the Fs, runs nothing.
#pragma once
#include <string>
#include <vector>

#include "apt/availability.h"
#include "apt/commands.h"
#include "apt/index.h"
#include "manifest/model.h"
#include "plan/plan.h"
#include "probe/host.h"
#include "sys/fs.h"

namespace gp::plan {

// The layers apply installs, in order: the installing rows of the table of layers (layers/table.h).
const std::vector<std::string>& ApplyLayers();

// Expands "a,b" items, checks each against ApplyLayers(); throws FlagError
// `--only: unknown layer "drivr" (did you mean "driver"?)`, or for a layer that installs nothing (os, host,
// gpu) `--only: layer "os" is checked by doctor but installs nothing (layers: driver, ...)`.
std::vector<std::string> ParseLayerList(const std::string& flag, const std::vector<std::string>& items);

struct PlanInput {
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;
  const sys::Fs* fs = nullptr;             // the host (or --root tree) for what the probe does not keep
  std::string manifest;                    // --manifest as given (recorded in the journal)
  std::vector<std::string> only, skip;     // layer filters
  std::vector<std::string> verify_layers;  // verify these even when nothing is missing (resume)
  apt::AptOptions apt;                     // lock timeout, progress
  std::string self_path = "gpuprep";       // how `--format sh` calls gpuprep for verify steps
  bool restart_docker = false;             // --restart-docker: a required restart may stop running containers
  // The stack repositories' index fetched just now (apply's preflight, apply/preflight.h). Without it the
  // planner reads the host's apt lists when they hold every repository, else leaves exact revisions to
  // apply time (Plan::needs_index).
  const apt::Index* index = nullptr;
  // Whether the host's distribution publishes the running kernel's headers, read from its sources just now
  // (apply's preflight). Without it the planner reads the host's apt lists. kMissing refuses a driver
  // install that would need them: DKMS could not build NVIDIA's module, and apt would fail mid-way.
  const apt::ListsAnswer* headers = nullptr;
  // The stack this host runs (its status.json record) when the plan is for another one: the plan then lists
  // what the move changes (Plan::move_changes).
  const manifest::Stack* from = nullptr;
};

Plan BuildPlan(const PlanInput& in);

// The stack's apt repositories for the host's OS that serve the layers apply installs with apt.
std::vector<const manifest::AptRepository*> AptRepositoriesFor(const manifest::Stack& stack,
                                                               const probe::HostFacts& facts);

// The nouveau blacklist gpuprep writes.
inline constexpr const char* kNouveauBlacklistPath = "/etc/modprobe.d/blacklist-nouveau.conf";
inline constexpr const char* kNouveauBlacklist = "blacklist nouveau\noptions nouveau modeset=0\n";

}  // namespace gp::plan
