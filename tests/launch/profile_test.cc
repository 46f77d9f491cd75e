// Team profiles: the shipped examples load; a broken profile fails with PATH:LINE:COL word for word.
#include "launch/profile.h"

#include <catch2/catch.hpp>

#include "manifest/profile.h"
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
  CHECK(mm.env.front() ==
        std::make_pair(std::string("PYTORCH_CUDA_ALLOC_CONF"), std::string("expandable_segments:True")));
}

TEST_CASE("launch profiles: errors point at the line and column", "[launch]") {
  CHECK(ErrorOf(kHead + "spec:\n  shm_per_gpus: 8g\n") ==
        "team.yaml:6:3: unknown key \"shm_per_gpus\" (did you mean \"shm_per_gpu\"?)");
  CHECK(ErrorOf(kHead + "spec:\n  ipc: shareable\n") ==
        "team.yaml:6:8: spec.ipc: expected host or private, got \"shareable\"");
  CHECK(ErrorOf(kHead + "spec:\n  shm: lots\n") ==
        "team.yaml:6:8: spec.shm: not a size: \"lots\" (examples: auto, 64m, 16g)");
  CHECK(ErrorOf(kHead + "spec:\n  env:\n    9X: a\n") ==
        "team.yaml:7:5: spec.env: invalid environment variable name \"9X\"");
  CHECK(ErrorOf(kHead + "spec:\n  mounts:\n    - {source: /a, target: rel}\n") ==
        "team.yaml:7:28: spec.mounts[].target: must be an absolute, normalised path without ':' or ',', got "
        "\"rel\"");
  CHECK(ErrorOf(kHead + "spec:\n  dataloader_heavy: maybe\n") ==
        "team.yaml:6:21: expected true or false, got \"maybe\"");
  CHECK(ErrorOf("apiVersion: gpuprep/v1\nkind: Stack\nmetadata: {name: t}\n") ==
        "team.yaml:2:7: kind must be \"Profile\", got \"Stack\"");
  CHECK(ErrorOf(kHead + "spec: [\n").find("team.yaml:") == 0);
}

// Profiles are read as strictly as stacks (the same YAML front end and typed fields).
TEST_CASE("launch profiles: as strict as stacks", "[launch]") {
  CHECK(ErrorOf(kHead + "spec:\n  ipc: host\n  ipc: private\n") == "team.yaml:7:3: duplicate key \"ipc\"");
  CHECK(ErrorOf(kHead + "spec:\n  ipc: !!str host\n").find("team.yaml:6:8: YAML tags") == 0);
  CHECK(ErrorOf(kHead + "spec:\n  ports: [\"8888:8888; rm -rf /\"]\n") ==
        "team.yaml:6:11: spec.ports: \"8888:8888; rm -rf /\" is not "
        "[IP:][HOST_PORT:]CONTAINER_PORT[/tcp|udp|sctp]");
  CHECK(ErrorOf(kHead + "spec:\n  ports: [\"0:80\"]\n").find("is not [IP:]") != std::string::npos);
  CHECK(ErrorOf(kHead + "spec:\n  mounts:\n    - {source: data, target: /data}\n") ==
        "team.yaml:7:16: spec.mounts[].source: must be an absolute, normalised path without ':' or ',', got "
        "\"data\"");
  CHECK(ErrorOf(kHead + "spec:\n  mounts:\n    - {source: /a/../etc, target: /data}\n").find("normalised") !=
        std::string::npos);
  CHECK(ErrorOf(kHead + "spec:\n  env:\n    A: \"x\\ny\"\n") ==
        "team.yaml:7:8: expected one line, got a value with a line break or control character");
  CHECK(ErrorOf("apiVersion: gpuprep/v1\nkind: Profile\nmetadata:\n  name: \"a;b\"\n") ==
        "team.yaml:4:9: profile name \"a;b\" is not a valid name (letters, digits and . _ + ~ -, starting "
        "with a "
        "letter or digit, at most 128)");
  for (const char* ok :
       {"8888:8888", "127.0.0.1:80:8080/tcp", "[::1]:80:80", "53/udp", "8000-8010:8000-8010"})
    CHECK(gp::manifest::ValidPortPublish(ok));
  for (const char* bad : {"", "80:", ":80", "1.2.3:80:80", "80/xyz", "70000", "a:80", "[::1:80:80"})
    CHECK_FALSE(gp::manifest::ValidPortPublish(bad));
}
