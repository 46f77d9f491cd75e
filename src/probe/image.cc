// The stack's image in the local engine: what doctor and launch read the image's CUDA from.
#include "docker/engine.h"
#include "docker/image_ref.h"
#include "docker/registry.h"
#include "probe/probe.h"

namespace gp::probe {

void ProbeImage(const ProbeEnv& env, const std::string& ref, HostFacts& facts) {
  DockerInfo& d = facts.docker;
  d.image = ImageInfo{};
  d.image.ref = ref;
  if (!env.docker || !d.engine_reachable || d.socket.empty() || ref.empty()) return;
  docker::Engine engine(*env.docker, d.socket,
                        d.api_version);  // the probe's /version said it: not asked again
  docker::EngineError err;
  auto img = engine.InspectImage(ref, &err);
  if (!img) {
    d.image.inspected = err.status == 404;
    if (err.status != 404) facts.probe_notes.push_back("image: " + ref + ": " + err.message);
    return;
  }
  d.image.inspected = d.image.present = true;
  d.image.digest = img->DigestFor(ref);
  auto cuda = docker::CudaFromEnv(img->env);
  d.image.cuda = cuda.cuda;
  d.image.cuda_raw = cuda.cuda_raw;
  d.image.cuda_driver = cuda.driver;
}

void ProbeRegistryImage(sys::HttpClient& http, const std::string& ref, const std::string& arch,
                        ImageInfo& image) {
  image.ref = ref;
  image.from_registry = false;
  image.registry_error.clear();
  auto parsed = docker::ParseImageRef(ref);
  if (!parsed) {
    image.registry_error = "\"" + ref + "\" is not an image reference";
    return;
  }
  docker::RegistryOptions opt;
  opt.architecture = docker::PlatformArchitecture(arch);
  std::string error;
  auto remote = docker::ReadRemoteImage(http, *parsed, opt, &error);
  if (!remote) {
    image.registry_error = error;
    return;
  }
  image.from_registry = true;
  image.digest = remote->digest;
  auto cuda = docker::CudaFromEnv(remote->env);
  image.cuda = cuda.cuda;
  image.cuda_raw = cuda.cuda_raw;
  image.cuda_driver = cuda.driver;
}

}  // namespace gp::probe
