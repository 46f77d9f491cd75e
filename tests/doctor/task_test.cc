// `doctor --json` with a stack that names a task (`workload.task`), on the fixture trees: the host layer
// judges the host for the task (healthy-h100: 8x H100 fits a 70B LoRA run, exit 0; secure-boot-unsigned: one
// L40S does not, a failure, exit 1), and `manifest show` names the task file.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/cli.h"

using nlohmann::json;

namespace {

const std::string kStack = std::string(GP_FIXTURES) + "/manifests/task-site.yaml";
const std::string kTaskFile = std::string(GP_FIXTURES) + "/manifests/tasks/llama-3-70b-lora.yaml";

json HostLayer(const std::string& tree, int* code) {
  auto r = gp::test::Gpuprep(
      {"doctor", "--json", "--root", std::string(GP_FIXTURES) + "/hosts/" + tree, "--manifest", kStack});
  *code = r.code;
  const json doc = json::parse(r.out);
  for (const json& l : doc["layers"])
    if (l["name"] == "host") return l;
  FAIL("no host layer");
  return {};
}

std::vector<std::string> Codes(const json& layer) {
  std::vector<std::string> out;
  for (const json& f : layer["findings"]) out.push_back(f["code"]);
  return out;
}

}  // namespace

TEST_CASE("doctor --json: the host layer judges the host for the stack's task", "[doctor][fixtures][host]") {
  int code = -1;
  const json h100 = HostLayer("healthy-h100", &code);
  INFO(h100.dump());
  CHECK(h100["status"] == "ok");
  // --root: the free disk is not known, so the disk is unchecked (skip), and the task fits.
  CHECK(Codes(h100) == std::vector<std::string>{"host.task-disk", "host.task-fits"});
  CHECK(h100["findings"][1]["message"].get<std::string>().rfind(
            "the task llama-3-70b-lora (" + kTaskFile + ") fits (85.52 GB per GPU, needs ", 0) == 0);
  CHECK(h100["wanted"].get<std::string>().rfind("for 8 GPUs (llm-finetune, task llama-3-70b-lora): ", 0) ==
        0);

  const json l40s = HostLayer("secure-boot-unsigned", &code);
  INFO(l40s.dump());
  CHECK(code == 1);
  CHECK(l40s["status"] == "fail");
  CHECK(Codes(l40s)[0] == "host.task-gpu-memory");
  CHECK(l40s["fix"] == "see the servers that fit the task: gpuprep size --task " + kTaskFile);

  auto show = gp::test::Gpuprep({"manifest", "show", "--json", kStack});
  REQUIRE(show.code == 0);
  CHECK(json::parse(show.out)["workload"]["task"] == kTaskFile);
}
