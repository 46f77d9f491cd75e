// The host layer when the stack names a task (`workload.task`): the host judged as `gpuprep size --host`
// judges it, on the fixture snapshots — an 8x H100 server fits a 70B LoRA run, a 4x L40S server does not
// (a failure naming the task and the shortfall) — CPUs under the sourced floor a warning with its source,
// disk short a failure, the stack's own numbers still checked; without a task, today's floor.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "layers/check.h"
#include "layers/sample.h"
#include "manifest/loader.h"
#include "probe/host_json.h"
#include "size/host_ratios.h"

using namespace gp;
using layers::Status;

namespace {

probe::HostFacts Snapshot(const std::string& name) {
  const std::string path = std::string(GP_FIXTURES) + "/snapshots/" + name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return probe::HostFromSnapshotText(text.str(), path);
}

manifest::Stack WithTask() {
  manifest::Stack s = test::SampleStack();
  s.workload.task = manifest::WorkloadTask{
      "tasks/lora.yaml", "site/tasks/lora.yaml",
      "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: llama-3-70b-lora}\nmodel: llama-3-70b\n"
      "method: lora\n"};
  return s;
}

const layers::Finding* Find(const layers::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("host with a task: 8x H100 fits a 70B LoRA run, 4x L40S does not", "[layers][doctor][host]") {
  const manifest::Stack stack = WithTask();
  const manifest::Compat& compat = manifest::EmbeddedCompat();

  const probe::HostFacts h100 = Snapshot("h100x8-p5.json");
  const layers::LayerReport fits = layers::CheckHost(layers::CheckInput{stack, compat, h100});
  INFO(fits.detail);
  CHECK(fits.status == Status::kOk);
  REQUIRE(fits.findings.size() == 1);
  CHECK(fits.findings[0].code == "host.task-fits");
  CHECK(fits.findings[0].message.rfind("the task llama-3-70b-lora (site/tasks/lora.yaml) fits (", 0) == 0);
  CHECK(fits.findings[0].message.find("memory from NVML's total on this host") != std::string::npos);
  CHECK(fits.wanted.rfind("for 8 GPUs (llm-finetune, task llama-3-70b-lora): GPU memory >= ", 0) == 0);
  CHECK(fits.wanted.find(", CPU >= 28 cores, RAM >= ") != std::string::npos);
  CHECK(fits.wanted.find("DataLoader workers per GPU, the floor") == std::string::npos);  // no sourced floor

  const probe::HostFacts l40s = Snapshot("l40sx4-g6e.json");
  const layers::LayerReport no = layers::CheckHost(layers::CheckInput{stack, compat, l40s});
  CHECK(no.status == Status::kFail);
  const layers::Finding* gpu = Find(no, "host.task-gpu-memory");
  REQUIRE(gpu);
  CHECK(gpu->status == Status::kFail);
  CHECK(
      gpu->message.rfind("GPU memory for the task llama-3-70b-lora (site/tasks/lora.yaml): 48.31 GB per GPU, "
                         "does not fit: needs ",
                         0) == 0);
  CHECK(gpu->fix == std::optional<std::string>("see the servers that fit the task: gpuprep size --task "
                                               "site/tasks/lora.yaml"));
  CHECK_FALSE(Find(no, "host.task-fits"));
}

TEST_CASE("host with a task: CPUs under the floor warn with the source; disk short fails; stack numbers stay",
          "[layers][doctor][host]") {
  manifest::Stack stack = WithTask();
  const manifest::Compat& compat = manifest::EmbeddedCompat();
  probe::HostFacts h = Snapshot("h100x8-p5.json");
  h.cpus = 16;
  h.disk_free_bytes = 10ULL << 30;
  const layers::LayerReport r = layers::CheckHost(layers::CheckInput{stack, compat, h});
  CHECK(r.status == Status::kFail);
  const layers::Finding* cpus = Find(r, "host.task-cpus");
  REQUIRE(cpus);
  CHECK(cpus->status == Status::kWarn);
  CHECK(
      cpus->message ==
      "CPU for the task llama-3-70b-lora (site/tasks/lora.yaml): 16 logical CPUs, below the floor: needs 28 "
      "cores (8 x (2 + 1) + 4 (llm: 2 DataLoader workers per GPU); " +
          std::string(size::kCpuSource).substr(0, std::string(size::kCpuSource).find(' ')) + ")");
  CHECK(cpus->fix == std::optional<std::string>("use a host with at least 28 cores, or fewer GPUs"));
  const layers::Finding* disk = Find(r, "host.task-disk");
  REQUIRE(disk);
  CHECK(disk->status == Status::kFail);
  CHECK(disk->message.find("10.74 GB free under /var, does not fit: needs ") != std::string::npos);
  CHECK(disk->message.find("checkpoint(s) x ") != std::string::npos);

  // The stack's own numbers are still its minimums, beside the task's judgement.
  stack.workload.min_cpus_per_gpu = 4;
  const layers::LayerReport own = layers::CheckHost(layers::CheckInput{stack, compat, h});
  const layers::Finding* stack_cpus = Find(own, "host.cpus");
  REQUIRE(stack_cpus);
  CHECK(stack_cpus->message ==
        "16 CPU cores for 8 GPUs: below 32 (4 per GPU, the stack's) for the llm-finetune "
        "workload");

  // Free disk unknown (a --root tree): the disk is unchecked, not failed.
  h = Snapshot("h100x8-p5.json");
  h.disk_free_bytes.reset();
  stack.workload.min_cpus_per_gpu = 0;
  const layers::LayerReport unknown = layers::CheckHost(layers::CheckInput{stack, compat, h});
  CHECK(unknown.status == Status::kOk);
  const layers::Finding* skip = Find(unknown, "host.task-disk");
  REQUIRE(skip);
  CHECK(skip->status == Status::kSkip);
  CHECK(Find(unknown, "host.task-fits"));

  // Without a task: the sourced floor, as before.
  stack.workload.task.reset();
  const layers::LayerReport floor = layers::CheckHost(layers::CheckInput{stack, compat, h});
  CHECK(floor.findings.size() == 1);
  CHECK(floor.findings[0].code == "host.sized");
  CHECK(floor.wanted.find("DataLoader workers per GPU for llm") != std::string::npos);
}
