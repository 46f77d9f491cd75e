// The kit the container layers' verify functions share (docker, container_toolkit, image: each judges its
// part in its own folder): the engine asked once, the stack's image present (verify never pulls), a container
// run with the stack's GPU request, and the classic failures named with their fix (Diagnosis, below).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apply/verify.h"
#include "docker/engine.h"
#include "manifest/model.h"
#include "verdict/report.h"

namespace gp::apply {

// A container of `image` running `cmd` with every GPU, requested the way the stack's docker.gpu_access says
// (the nvidia runtime's --gpus all, or CDI's nvidia.com/gpu=all): verify's checks and accept's measurement.
docker::ContainerRun StackGpuRun(const manifest::Stack& s, const std::string& image,
                                 std::vector<std::string> cmd);

// The Docker engine verify asks, and its answer.
struct EngineAnswer {
  std::unique_ptr<docker::Engine> engine;        // null with --root: nothing of the live host is contacted
  std::optional<docker::EngineVersion> version;  // nullopt: the engine did not answer (`error` says why)
  docker::EngineError error;
};
EngineAnswer AskEngine(const VerifyEnv& env);
// When the engine gave no answer, the finding that says so (a skip with --root, else a failure with the fix);
// true when it added one.
bool AddNoEngine(const EngineAnswer& a, verdict::LayerReport& r);

// The stack's image as the engine has it, with `r.wanted` set to its reference. nullopt after adding the
// finding: a skip when the stack names no image, a failure when it is not pulled or cannot be inspected.
struct StackImage {
  std::string ref;
  docker::ImageDetails details;
};
std::optional<StackImage> StackImagePresent(docker::Engine& engine, const manifest::Stack& s,
                                            verdict::LayerReport& r);

// A container run that failed (did not start, or exited non-zero) as one finding, diagnosed where it can be.
void AddRunFailure(const docker::ContainerResult& res, const std::string& what, verdict::LayerReport& r);

// The last two non-empty lines of a program's output, joined by " / ".
std::string LastLines(const std::string& text);

struct Diagnosis {
  std::string what;  // "Docker does not know the nvidia runtime"
  std::string fix;
};
// What an engine or container error means, for the errors first boots hit most; nullopt for others.
std::optional<Diagnosis> DiagnoseContainerError(const std::string& message);

}  // namespace gp::apply
