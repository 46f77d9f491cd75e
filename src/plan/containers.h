// What the container layers' plans (docker, container_toolkit, image: layers/<layer>/plan.cc) share: the
// installed engine and its version, their packages' decision (pinned through the transaction, or the
// distribution's by name). Pure: the toolkit's files come in the host state (plan/host_state.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/packages.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "util/version.h"

namespace gp::plan {

// The installed engine package's version (docker-ce, docker.io or moby-engine); "" when none is installed.
std::string InstalledEngine(const PackageState& state);

// A container layer's packages: pinned ones (a version or upstream, or every one when `upstream` is given)
// through DecidePackages (resolved, in the closure, pinned and held); unpinned ones (the distribution's
// docker.io) by name into `by_name` when not installed. The detail names both.
PackageDecision DecideContainerPackages(const PackageContext& ctx, const std::string& layer,
                                        const std::vector<manifest::AptPackage>& pkgs,
                                        const std::string& upstream, std::vector<std::string>& by_name);

inline constexpr const char* kDockerUnit = "docker.service";
inline constexpr const char* kImagesRecord = "/var/lib/gpuprep/images.json";

}  // namespace gp::plan
