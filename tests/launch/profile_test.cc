// Team profiles: the shipped examples load; a broken profile fails with PATH:LINE:COL word for word.
#include <catch2/catch.hpp>

#include "launch/profile.h"
#include "sys/fs.h"
#include "util/error.h"

using gp::launch::ParseProfile;

namespace {
std::string ErrorOf(const std::string& text) {
  try {
    ParseProfile(text, "team.yaml");
  } catch (const gp::Error& e) {
    CHECK(e.code() == gp::kExitUsage);
    return e.what();
  }
  return "(no error)";
}
const std::string kHead = "apiVersion: gpuprep/v1\nkind: Profile\nmetadata:\n  name: t\n";
}  // namespace

TEST_CASE("launch profiles: the shipped examples", "[launch]") {
  CHECK(gp::launch::EmbeddedProfileNames() ==
        std::vector<std::string>{"llm-finetune", "multimodal", "recommender", "vision"});
  gp::sys::DiskFs fs("/");
  const auto vision = gp::launch::LoadProfile("vision", fs);
  CHECK(vision.source == "embedded:vision");
  CHECK(vision.dataloader_heavy);
  CHECK(vision.shm_per_gpu == 16ULL << 30);
  const auto mm = gp::launch::LoadProfile("multimodal", fs);
  CHECK(mm.ports == std::vector<std::string>{"8888:8888"});
  CHECK(mm.env.front() == std::make_pair(std::string("PYTORCH_CUDA_ALLOC_CONF"), std::string("expandable_segments:True")));
}

TEST_CASE("launch profiles: errors point at the line and column", "[launch]") {
  CHECK(ErrorOf(kHead + "spec:\n  shm_per_gpus: 8g\n") ==
        "team.yaml:6:3: unknown key \"shm_per_gpus\" in spec (did you mean \"shm_per_gpu\"?)");
  CHECK(ErrorOf(kHead + "spec:\n  ipc: shareable\n") == "team.yaml:6:8: spec.ipc: expected host or private, got \"shareable\"");
  CHECK(ErrorOf(kHead + "spec:\n  shm: lots\n") == "team.yaml:6:8: spec.shm: not a size: \"lots\" (examples: 64m, 16g)");
  CHECK(ErrorOf(kHead + "spec:\n  env:\n    9X: a\n") == "team.yaml:7:5: spec.env: invalid environment variable name \"9X\"");
  CHECK(ErrorOf(kHead + "spec:\n  mounts:\n    - {source: /a, target: rel}\n") ==
        "team.yaml:7:28: spec.mounts[].target: must be an absolute path, got \"rel\"");
  CHECK(ErrorOf(kHead + "spec:\n  dataloader_heavy: maybe\n") ==
        "team.yaml:6:21: spec.dataloader_heavy: expected true or false, got \"maybe\"");
  CHECK(ErrorOf("apiVersion: gpuprep/v1\nkind: Stack\nmetadata: {name: t}\n") == "team.yaml:2:7: kind: expected \"Profile\"");
  CHECK(ErrorOf(kHead + "spec: [\n") .find("team.yaml:") == 0);
}
