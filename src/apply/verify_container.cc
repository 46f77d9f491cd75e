#include "apply/verify_container.h"

#include "apply/image_pull.h"
#include "docker/engine.h"
#include "docker/image_ref.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::apply {

using verdict::Status;

docker::ContainerRun StackGpuRun(const manifest::Stack& s, const std::string& image,
                                 std::vector<std::string> cmd) {
  docker::ContainerRun run;
  run.image = image;
  run.cmd = std::move(cmd);
  if (s.docker.gpu_access == "cdi") run.cdi_devices = {"nvidia.com/gpu=all"};
  return run;
}

std::optional<Diagnosis> DiagnoseContainerError(const std::string& m) {
  if (m.find("unknown or invalid runtime name: nvidia") != std::string::npos)
    return Diagnosis{
        "Docker does not know the nvidia runtime (the toolkit is not registered in daemon.json, or "
        "Docker was not reloaded)",
        verdict::ApplyFix("container_toolkit")};
  if (m.find("could not select device driver \"\" with capabilities: [[gpu]]") != std::string::npos)
    return Diagnosis{
        "Docker has no GPU device driver: the NVIDIA Container Toolkit is not installed, or Docker "
        "started before it was",
        verdict::ApplyFix("container_toolkit") + ", then: sudo systemctl restart docker"};
  if (m.find("could not select device driver \"cdi\"") != std::string::npos)
    return Diagnosis{"CDI is not enabled in Docker (Docker 25 to 28.2 need \"features\": {\"cdi\": true})",
                     verdict::ApplyFix("container_toolkit") + " --restart-docker"};
  if (m.find("unresolvable CDI devices") != std::string::npos)
    return Diagnosis{"no CDI spec names the GPUs",
                     "sudo nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml (or: " +
                         verdict::ApplyFix("container_toolkit") + ")"};
  if (ToLower(m).find("driver/library version mismatch") != std::string::npos)
    return Diagnosis{"NVML inside the container sees another driver than the loaded kernel module",
                     "reboot so the kernel module matches the installed driver libraries"};
  if (m.find("No such image") != std::string::npos)
    return Diagnosis{"the image is not pulled (verify never pulls)", verdict::ApplyFix("image")};
  return std::nullopt;
}

std::string LastLines(const std::string& text) {
  auto lines = Split(text, '\n');
  std::vector<std::string> kept;
  for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < 2; ++it)
    if (!Trim(*it).empty()) kept.insert(kept.begin(), std::string(Trim(*it)));
  return Join(kept, " / ");
}

void AddRunFailure(const docker::ContainerResult& res, const std::string& what, verdict::LayerReport& r) {
  std::string message = res.ran ? LastLines(res.err.empty() ? res.out : res.err) : res.error.message;
  auto d = DiagnoseContainerError(message);
  if (d) return r.Add(Status::kFail, what + ": " + d->what + " (" + message + ")", d->fix);
  r.Add(Status::kFail,
        what + (res.ran ? " exited with " + std::to_string(res.exit_code) : " failed at " + res.stage) +
            ": " + message,
        "gpuprep doctor");
}

EngineAnswer AskEngine(const VerifyEnv& env) {
  EngineAnswer a;
  if (!env.docker) return a;
  a.engine = std::make_unique<docker::Engine>(*env.docker, DockerSocket(env.facts));
  a.version = a.engine->Version(&a.error);
  return a;
}

bool AddNoEngine(const EngineAnswer& a, verdict::LayerReport& r) {
  if (!a.engine) {
    r.Add(Status::kSkip, "Docker not contacted (--root: nothing of the live host is contacted)");
    return true;
  }
  if (a.version) return false;
  r.Add(Status::kFail, "the Docker engine does not answer: " + a.error.message,
        "sudo systemctl enable --now docker");
  return true;
}

std::optional<StackImage> StackImagePresent(docker::Engine& engine, const manifest::Stack& s,
                                            verdict::LayerReport& r) {
  StackImage out;
  out.ref = docker::ImagePullReference(s.image.ref, s.image.digest, s.image.mirror);
  r.wanted = out.ref;
  if (out.ref.empty()) {
    r.Add(Status::kSkip, "stack " + s.name + " names no image to run a container from");
    return std::nullopt;
  }
  docker::EngineError err;
  auto details = engine.InspectImage(out.ref, &err);
  if (!details) {
    if (err.status == 404)
      r.Add(Status::kFail, out.ref + " is not pulled (verify never pulls)", verdict::ApplyFix("image"));
    else
      r.Add(Status::kFail, "image inspect " + out.ref + ": " + err.message, "gpuprep doctor");
    return std::nullopt;
  }
  out.details = std::move(*details);
  return out;
}

}  // namespace gp::apply
