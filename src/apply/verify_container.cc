#include "apply/verify_container.h"

#include "apply/image_pull.h"
#include "docker/engine.h"
#include "docker/image_ref.h"
#include "util/strings.h"
#include "util/version.h"
#include "verdict/rules.h"

namespace gp::apply {

std::string LastLines(const std::string& text);  // the last two non-empty lines, joined by " / "

namespace {

using verdict::Status;

const char* const kTorchCheck =
    "import torch; print(torch.cuda.device_count(), torch.cuda.get_device_name(0))";

std::string StackImage(const manifest::Stack& s) {
  return docker::ImagePullReference(s.image.ref, s.image.digest, s.image.mirror);
}

// The failure of a container run as one finding.
void Failed(const docker::ContainerResult& res, const std::string& what, verdict::LayerReport& r) {
  std::string message = res.ran ? LastLines(res.err.empty() ? res.out : res.err) : res.error.message;
  auto d = DiagnoseContainerError(message);
  if (d) return r.Add(Status::kFail, what + ": " + d->what + " (" + message + ")", d->fix);
  r.Add(Status::kFail,
        what + (res.ran ? " exited with " + std::to_string(res.exit_code) : " failed at " + res.stage) +
            ": " + message,
        "gpuprep doctor");
}

}  // namespace

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

void VerifyContainerLayer(const std::string& layer, const VerifyEnv& env, verdict::LayerReport& r) {
  if (!env.docker)
    return r.Add(Status::kSkip, "Docker not contacted (--root: nothing of the live host is contacted)");
  const manifest::Stack& s = *env.stack;
  docker::Engine engine(*env.docker, DockerSocket(env.facts));
  docker::EngineError err;
  auto version = engine.Version(&err);
  // A stack that does not set Docker up (no docker: section) may serve another container engine: without a
  // Docker engine the toolkit's packages are what there is to verify (apply checked and held them).
  if (!version && !s.docker.present && layer == "container_toolkit")
    return r.Add(Status::kSkip, "no Docker engine here and stack " + s.name +
                                    " does not set one up: the runtime registration is not checked");
  if (!version)
    return r.Add(Status::kFail, "the Docker engine does not answer: " + err.message,
                 "sudo systemctl enable --now docker");
  if (layer == "docker") {
    r.found = version->version;
    const char* floor = s.docker.gpu_access == "cdi" ? "25.0" : "19.03";
    r.wanted = std::string(">= ") + floor;
    auto v = Version::Parse(version->version.substr(0, version->version.find_first_of("-+~")));
    if (v && *v < Version::Must(floor))
      return r.Add(Status::kFail, "Docker " + v->str() + " is older than " + floor, "upgrade Docker Engine");
    return r.Add(Status::kOk, "Docker " + version->version + " answers on its socket");
  }
  const std::string image = StackImage(s);
  r.wanted = image;
  if (image.empty())
    return r.Add(Status::kSkip, "stack " + s.name + " names no image to run a container from");
  auto details = engine.InspectImage(image, &err);
  if (!details) {
    if (err.status == 404)
      return r.Add(Status::kFail, image + " is not pulled (verify never pulls)", verdict::ApplyFix("image"));
    return r.Add(Status::kFail, "image inspect " + image + ": " + err.message, "gpuprep doctor");
  }
  const size_t gpus = env.facts ? env.facts->gpus.size() : 0;
  if (layer == "container_toolkit") {
    auto res = engine.Run(StackGpuRun(s, image, {"nvidia-smi", "-L"}));
    if (!res.ran || res.exit_code != 0) return Failed(res, "nvidia-smi -L in a container", r);
    size_t listed = 0;
    for (const auto& line : Split(res.out, '\n')) listed += StartsWith(Trim(line), "GPU ");
    r.found = std::to_string(listed) + " GPUs in a container";
    if (listed != gpus)
      return r.Add(
          Status::kFail,
          "a container lists " + std::to_string(listed) + " GPUs but the host has " + std::to_string(gpus),
          "gpuprep doctor (check the driver layer and NVIDIA_VISIBLE_DEVICES)");
    return r.Add(Status::kOk, "a container sees every GPU (" + std::to_string(listed) + ", nvidia-smi -L)");
  }
  // The torch check needs PyTorch in the image: NGC's PyTorch images (and PyTorch's own) set PYTORCH_VERSION
  // in their config. A CUDA base image has none; its GPU check is nvidia-smi -L above.
  if (!details->CarriesPyTorch())
    return r.Add(Status::kSkip,
                 image + " carries no PyTorch (no PYTORCH_VERSION in its config): no torch check");
  auto res = engine.Run(StackGpuRun(s, image, {"python", "-c", kTorchCheck}));
  if (!res.ran || res.exit_code != 0) return Failed(res, "the torch check in " + image, r);
  auto words = SplitWords(LastLines(res.out));
  auto count = words.empty() ? std::nullopt : ParseUnsigned(words[0]);
  if (!count)
    return r.Add(Status::kFail, "the torch check printed \"" + LastLines(res.out) + "\"", "gpuprep doctor");
  std::string name;
  for (size_t i = 1; i < words.size(); ++i) name += (i > 1 ? " " : "") + words[i];
  r.found = std::to_string(*count) + " x " + name;
  if (*count != gpus)
    return r.Add(Status::kFail,
                 "torch sees " + std::to_string(*count) + " GPUs but the host has " + std::to_string(gpus),
                 "gpuprep doctor");
  r.Add(Status::kOk, "torch in " + image + " sees " + std::to_string(*count) + " GPUs (" + name + ")");
}

}  // namespace gp::apply
