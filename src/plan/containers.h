// Planning the container half of a host (docker, container_toolkit, image): which packages join the one
// apt transaction, and the steps after it (the engine enabled, the toolkit's runtime mode, CDI spec,
// daemon.json edited losslessly, Docker reloaded or restarted, the image pulled). Pure, like the planner.
#pragma once
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/plan.h"
#include "plan/planner.h"

namespace gp::plan {

struct ContainerPlan {
  std::vector<LayerDecision> layers;             // docker, container_toolkit, image (in this order)
  std::vector<manifest::AptPackage> install;     // missing or at another version: into the apt transaction
  std::vector<std::string> hold;                 // names to hold after it
  bool allow_held = false;                       // a package to change is held now
  bool toolkit_repository = false;               // the toolkit's apt repository is needed
  std::vector<Step> before;                      // before apt update (retire the experimental channel)
  std::vector<Step> after;                       // after the install (and any reboot check)
  std::vector<std::string> blockers;             // a restart that would stop running containers, ...
};

ContainerPlan PlanContainers(const PlanInput& in);

// The apt list files (sources.list and sources.list.d/*.list) with an active line for NVIDIA's
// experimental toolkit channel (libnvidia-container/experimental).
std::vector<std::string> ExperimentalToolkitLists(const sys::Fs& fs);

// The `mode` of [nvidia-container-runtime] in /etc/nvidia-container-runtime/config.toml; "" when unset.
std::string ToolkitRuntimeMode(const sys::Fs& fs);

inline constexpr const char* kDockerUnit = "docker.service";
inline constexpr const char* kImagesRecord = "/var/lib/gpuprep/images.json";

}  // namespace gp::plan
