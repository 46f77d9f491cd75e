// apply's kPull action: the image pulled through the Engine API with progress, its digest checked against
// the stack's pin and recorded in /var/lib/gpuprep/images.json ({"REF": "sha256:..."}), which launch reads.
#pragma once
#include <string>

#include "apply/executor.h"
#include "plan/plan.h"

namespace gp::apply {

// "" when pulled (and the digest matches); else one line saying what failed.
std::string PullImage(const plan::Action& a, ExecEnv& env);

// The Engine API socket: the one the probe reached, else DOCKER_HOST's default.
std::string DockerSocket(const probe::HostFacts* facts);

}  // namespace gp::apply
