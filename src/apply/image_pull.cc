#include "apply/image_pull.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "docker/engine.h"
#include "docker/image_ref.h"
#include "plan/containers.h"

namespace gp::apply {

std::string DockerSocket(const probe::HostFacts* facts) {
  if (facts && !facts->docker.socket.empty()) return facts->docker.socket;
  return "/var/run/docker.sock";
}

std::string PullImage(const plan::Action& a, ExecEnv& env) {
  if (!env.docker) return "no Docker Engine API to pull " + a.image + " through";
  docker::Engine engine(*env.docker, DockerSocket(env.facts));
  docker::EngineError err;
  docker::PullProgress last;
  std::string shown;
  const bool ok = engine.Pull(
      a.image,
      [&](const docker::PullProgress& p) {
        std::string text = p.Text(a.image);
        if (text != shown && env.progress) env.progress(text);
        shown = text;
      },
      &err, &last);
  if (!ok) return "cannot pull " + a.image + ": " + err.message;
  auto img = engine.InspectImage(a.image, &err);
  if (!img) return "pulled " + a.image + " but the engine cannot show it: " + err.message;
  std::string digest = img->DigestFor(a.image);
  if (digest.empty()) digest = last.digest;
  if (!a.digest.empty() && digest != a.digest)
    return "pulled " + a.image + " as " + (digest.empty() ? "an image without a digest" : digest) +
           " but the stack pins " + a.digest + "; it is not used (remove it: docker image rm " + a.image +
           ")";
  nlohmann::ordered_json record = nlohmann::ordered_json::object();
  if (auto text = env.fs->Read(plan::kImagesRecord)) {
    auto j = nlohmann::ordered_json::parse(*text, nullptr, false);
    if (j.is_object()) record = j;
  }
  record[a.image] = digest;
  auto w = env.fs->WriteAtomic(plan::kImagesRecord, record.dump(2) + "\n", 0644, false);
  if (!w.ok) return "cannot record the image's digest: " + w.error;
  spdlog::info("pulled {} ({}; {} layers)", a.image, digest.empty() ? "no digest" : digest, last.layers);
  return "";
}

}  // namespace gp::apply
