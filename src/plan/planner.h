// What a plan is made from (the stack, the probed host, the layer filters, the index apply fetched), and the
// repository choice every layer's plan shares. The plan itself is composed in plan/compose.h from each
// layer's plan (layers/plan.h BuildPlan). Pure: a function of these values; reads no file, runs nothing.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "apt/availability.h"
#include "apt/commands.h"
#include "apt/index.h"
#include "manifest/model.h"
#include "plan/host_state.h"
#include "plan/plan.h"
#include "probe/host.h"

namespace gp::plan {

struct PlanInput {
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;
  // What the probe does not keep, read from the host (or --root tree) just before this plan
  // (host/files.h ReadFiles).
  const HostState* host = nullptr;
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
  // Whether the host's distribution publishes the kernel packages the plan adds (the running kernel's
  // headers for DKMS, its extra modules for ib_umad), by package, read from its sources just now (apply's
  // preflight); a package not in the map is taken as installable. Without the map the planner reads the
  // host's apt lists. kMissing refuses the layer that needs it: apt would fail mid-way.
  const std::map<std::string, apt::ListsAnswer>* kernel_packages = nullptr;
  // The stack this host runs (its status.json record) when the plan is for another one: the plan then lists
  // what the move changes (Plan::move_changes).
  const manifest::Stack* from = nullptr;
};

// The stack's apt repositories for the host's OS that serve the layers apply installs with apt.
std::vector<const manifest::AptRepository*> AptRepositoriesFor(const manifest::Stack& stack,
                                                               const probe::HostFacts& facts);

// Whether apt could install the kernel package `package` from the host's distribution: the preflight's
// answer when there is one (PlanInput::kernel_packages), else the host's apt lists (HostState).
apt::ListsAnswer KernelPackageAnswer(const PlanInput& in, const std::string& package);

// The nouveau blacklist gpuprep writes (its path: plan/host_state.h).
inline constexpr const char* kNouveauBlacklist = "blacklist nouveau\noptions nouveau modeset=0\n";

}  // namespace gp::plan
