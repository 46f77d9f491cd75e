// docker layer: the Docker CLI and engine (version from the API on the unix socket, at least the floor of the
// stack's GPU access: verdict/rules.h, as plan and verify judge it) and a daemon.json that parses. With
// --root the engine is never contacted: an installed CLI is all that can be known.
#include "layers/check.h"

#include "layers/docker/docker.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckDocker(const CheckInput& in) {
  LayerReport r;
  r.name = "docker";
  r.wanted = "engine installed and running";
  const probe::DockerInfo& d = in.host.docker;
  if (d.engine_reachable) {
    r.found = d.version.empty() ? "running" : d.version;
    if (auto below = verdict::DockerBelowFloor(d.version, in.stack.docker.gpu_access)) {
      r.wanted = verdict::DockerGpuFloor(in.stack.docker.gpu_access).wanted;
      r.Add("docker.too-old", Status::kFail,
            *below + ": containers get no GPUs the way stack " + in.stack.name + " asks",
            "upgrade Docker Engine (gpuprep leaves an installed engine alone), then: gpuprep doctor");
    } else {
      r.Add("docker.engine", Status::kOk, "Docker engine " + d.version + " answers on its socket");
    }
  } else if (!d.cli_found) {
    r.Add("docker.missing", Status::kFail, "Docker is not installed",
          in.stack.docker.present ? ApplyFix("docker")
                                  : "install Docker Engine (https://docs.docker.com/engine/install/), then: "
                                    "sudo systemctl enable --now docker");
  } else if (!in.host.live) {
    r.found = "installed";
    r.Add("docker.installed", Status::kOk,
          "Docker is installed (the engine is not contacted for a --root tree or a snapshot)");
  } else {
    r.found = "CLI only";
    r.Add("docker.engine-down", Status::kFail,
          "the Docker engine does not answer" + (d.detail.empty() ? std::string() : " (" + d.detail + ")"),
          "sudo systemctl enable --now docker");
  }
  if (!d.daemon_json_error.empty())
    r.Add("docker.daemon-json", Status::kFail,
          "/etc/docker/daemon.json does not parse: " + d.daemon_json_error,
          "correct /etc/docker/daemon.json, then: sudo systemctl restart docker");
  return r;
}

// verify: a container sees the GPUs (apply/verify_container.h), so only with an engine to ask.
extern const Layer kDockerLayer = {"docker",
                                   CheckDocker,
                                   nullptr,
                                   PlanDocker,
                                   VerifyDocker,
                                   [](const manifest::Stack&, const probe::HostFacts& h) { return h.docker.engine_reachable; }};

}  // namespace gp::layers
