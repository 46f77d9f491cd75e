// Planning the container half of a host (docker, container_toolkit, image): which packages join the one
// apt transaction, and the steps after it (the engine enabled, the toolkit's runtime mode, CDI spec,
// daemon.json edited losslessly, Docker reloaded or restarted, the image pulled). Pure, like the planner.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/packages.h"
#include "plan/plan.h"
#include "plan/planner.h"

namespace gp::plan {

struct ContainerPlan {
  std::vector<LayerDecision> layers;          // docker, container_toolkit, image (in this order)
  std::vector<manifest::AptPackage> install;  // unpinned packages of the distribution (docker.io): by name
  std::vector<Step> before;                   // before apt update (retire the experimental channel)
  std::vector<Step> after;                    // after the install (and any reboot check)
  std::vector<std::string> blockers;          // a restart that would stop running containers, ...
};

// The planner's own package decision (plan/packages.h DecidePackages): each package installed at its pin is
// kept, else resolved from the repositories' index into the one transaction, pinned in the closure and held.
// Returns the layer's detail ("" when nothing is missing); sets `error` when the index cannot serve a pin.
// `layer` is the layer the packages belong to (their pins are that layer's, plan/pins.h).
using ResolvePackages =
    std::function<std::string(const std::string& layer, const std::vector<manifest::AptPackage>&,
                              const std::string& upstream, std::string& error)>;

// `state`: the host's package state, read once by the planner (plan/packages.h).
ContainerPlan PlanContainers(const PlanInput& in, const PackageState& state, const ResolvePackages& resolve);

// The apt list files (sources.list and sources.list.d/*.list) with an active line for NVIDIA's
// experimental toolkit channel (libnvidia-container/experimental).
std::vector<std::string> ExperimentalToolkitLists(const sys::Fs& fs);

// The `mode` of [nvidia-container-runtime] in /etc/nvidia-container-runtime/config.toml; "" when unset.
std::string ToolkitRuntimeMode(const sys::Fs& fs);

inline constexpr const char* kDockerUnit = "docker.service";
inline constexpr const char* kImagesRecord = "/var/lib/gpuprep/images.json";

}  // namespace gp::plan
