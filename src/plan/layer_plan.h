// What one layer's plan returns, as a value: its decision, its packages for the one apt transaction, the
// steps it adds at their place in the plan, its blockers, reboot reasons and redistributable archives.
// Each row of the table of layers has a plan function returning one (layers/<layer>/plan.cc); the
// composition (plan/compose.h) joins them into the plan. A layer's plan reads only its inputs (LayerContext).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/packages.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "probe/host.h"
#include "redist/request.h"

namespace gp::plan {

struct LayerPlan {
  LayerDecision decision;
  PackageDecision packages;
  std::vector<std::string> blockers;  // reasons apply must stop before any change
  bool blocked = false;               // the refusal already stands in `blockers`
  // Whether the layer is named by the apt install and hold steps (an install the transaction serves).
  bool in_transaction = false;
  // Steps at their place in the plan: after the apt install (before the holds), after the holds, and last
  // (after every layer's other steps, before the containers' and the verifies).
  std::vector<Step> after_install, after_hold, last;
  std::vector<redist::Request> redist;
  // Steps before the repositories are set up and apt reads its lists (the toolkit's experimental channel
  // turned off).
  std::vector<Step> first;
  // The distribution's unpinned packages (docker.io), installed by name in the same transaction after
  // every pinned one; never pinned or held. A word ending in "-" removes that package in the transaction
  // (NVIDIA's version-locking package of another branch).
  std::vector<std::string> by_name;
  // Kernel packages the install adds from the distribution (the headers DKMS needs, the extra modules with
  // ib_umad): unpinned, asked of the host's sources before any change.
  std::vector<std::string> kernel_packages;
  bool reboot = false;  // apply ends with a reboot (a new driver)
};

struct LayerContext {
  const PlanInput* in = nullptr;
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;
  const HostState* host = nullptr;  // the host's files as read before planning
  PackageContext packages;          // the package state and the index
  std::string arch;                 // dpkg's architecture name ("amd64")
  // The plans of the layers before this one, in table order (the container toolkit and the image read the
  // docker layer's decision).
  const std::vector<LayerPlan>* earlier = nullptr;

  bool Selected(const std::string& layer) const;  // by --only / --skip
  // The decision of an earlier layer; nullptr when it has none (not planned, or planned later).
  const LayerDecision* Earlier(const std::string& layer) const;
};

// A layer decision of `kind` with `detail`.
LayerPlan Decided(const std::string& layer, LayerDecision::Kind kind, std::string detail);

// Why a layer whose version or packages the stack leaves open cannot be installed ("" when it can).
std::string UnknownPin(const std::string& stack, const std::string& layer, const manifest::Pinned& pin,
                       const std::vector<manifest::AptPackage>& pkgs);

// What the stack pins for a layer ("535.129.03", or its first package's version).
std::string Wanted(const manifest::Pinned& pin, const std::vector<manifest::AptPackage>& pkgs);

// A step with one layer.
Step MakeStep(std::string id, std::vector<std::string> layers, std::string title);

// The plan of an apt or redist component (cuda, cudnn, nccl; plan/components.cc): the stack's packages at
// their pins (cuDNN and NCCL name the CUDA build in their revision), or NVIDIA's archives with
// `source: redist`.
LayerPlan PlanComponent(const LayerContext& ctx, const std::string& layer, const manifest::ComponentSpec& c);

}  // namespace gp::plan
