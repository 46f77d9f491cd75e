// A stack's `workload.task`: a Task document read beside the document that names it (through `extends:`
// too), refused with PATH:LINE:COL at the value when the path leaves that directory, the file is missing or
// the stack came from a URL; a bad task refused at its own position when a verb loads the stack (exit 2).
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/task.h"
#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "support/cli.h"
#include "sys/fs.h"

using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {

const std::string kTask =
    "apiVersion: gpuprep/v1\n"      // 1
    "kind: Task\n"                  // 2
    "metadata: {name: big-lora}\n"  // 3
    "model: llama-3-70b\n"          // 4
    "method: lora\n";               // 5

// kMinimalStack with a workload section naming `task` (line 17, the value at column 9).
std::string StackNaming(const std::string& task) {
  return std::string(gp::test::kMinimalStack) + "workload:\n  profile: llm-finetune\n  task: " + task + "\n";
}

struct Dir {
  gp::test::TempRoot root;
  gp::sys::DiskFs fs{"/"};
  std::string Path(const std::string& p) const { return root.path() + p; }
  m::Stack Load(const std::string& stack_text) {
    root.Write("/site/stack.yaml", stack_text);
    return m::LoadStack(Path("/site/stack.yaml"), m::LoadContext{&fs, nullptr});
  }
};

}  // namespace

TEST_CASE("workload.task: a Task document beside the stack, read when the stack loads", "[manifest][task]") {
  Dir d;
  d.root.Write("/site/tasks/big.yaml", kTask);
  const m::Stack s = d.Load(StackNaming("tasks/big.yaml"));
  REQUIRE(s.workload.task);
  CHECK(s.workload.task->written == "tasks/big.yaml");
  CHECK(s.workload.task->path == d.Path("/site/tasks/big.yaml"));
  CHECK(s.workload.task->text == kTask);
  CHECK(s.origins.at("workload.task") == d.Path("/site/stack.yaml") + ":17:9");
  const auto task = gp::layers::StackTask(s);
  REQUIRE(task);
  CHECK(task->name == "big-lora");
  CHECK(task->path == d.Path("/site/tasks/big.yaml"));
  CHECK(task->task.method == gp::size::Method::kLora);

  // Named in a parent file: read beside the parent, not beside the child.
  d.root.Write("/site/base/stack.yaml", StackNaming("tasks/big.yaml"));
  d.root.Write("/site/base/tasks/big.yaml", kTask);
  d.root.Write("/site/child.yaml",
               "apiVersion: gpuprep/v1\nkind: Stack\nextends: base/stack.yaml\nmetadata: {name: c}\n");
  const m::Stack c = m::LoadStack(d.Path("/site/child.yaml"), m::LoadContext{&d.fs, nullptr});
  REQUIRE(c.workload.task);
  CHECK(c.workload.task->path == d.Path("/site/base/tasks/big.yaml"));

  // No task: nothing read, today's workload.
  const m::Stack none = d.Load(std::string(gp::test::kMinimalStack) + "workload: {profile: vision}\n");
  CHECK_FALSE(none.workload.task);
  CHECK_FALSE(gp::layers::StackTask(none));
}

TEST_CASE("workload.task: paths that leave the stack's directory, missing files, URL stacks",
          "[manifest][task]") {
  Dir d;
  const std::string at = d.Path("/site/stack.yaml") + ":17:9: ";
  CHECK(ErrorOf([&] { d.Load(StackNaming("/etc/task.yaml")); }) ==
        "2 " + at + "workload.task: must be relative to the file that names it");
  CHECK(ErrorOf([&] { d.Load(StackNaming("../task.yaml")); }) ==
        "2 " + at + "workload.task: must be normalised (no //, . or .. components)");
  CHECK(ErrorOf([&] { d.Load(StackNaming("tasks//t.yaml")); }) ==
        "2 " + at + "workload.task: must be normalised (no //, . or .. components)");
  CHECK(ErrorOf([&] { d.Load(StackNaming("\"t ask.yaml\"")); }) ==
        "2 " + at + "workload.task: a path here holds letters, digits and . _ + ~ - / only");
  CHECK(ErrorOf([&] { d.Load(StackNaming("tasks/")); }) ==
        "2 " + at + "workload.task: must name a file, not a directory");
  CHECK(ErrorOf([&] { d.Load(StackNaming("\"\"")); }) == "2 " + at + "workload.task: must not be empty");
  const std::string missing = ErrorOf([&] { d.Load(StackNaming("tasks/none.yaml")); });
  CHECK(missing.rfind("2 " + at + "workload.task \"tasks/none.yaml\": ", 0) == 0);
  CHECK(missing.find(d.Path("/site/tasks/none.yaml")) != std::string::npos);
  // Text handed in as fetched from a URL cannot name a file beside it.
  CHECK(ErrorOf([&] {
          m::ParseStack(StackNaming("t.yaml"), "https://example.com/stack.yaml",
                        m::LoadContext{&d.fs, nullptr});
        }) ==
        "2 https://example.com/stack.yaml:17:9: workload.task \"t.yaml\": a stack fetched from a URL "
        "cannot name a task file");
}

TEST_CASE("workload.task: a bad task is refused at its own position", "[manifest][task]") {
  Dir d;
  const std::string task = d.Path("/site/t.yaml");
  auto error_of = [&](const std::string& text) {
    d.root.Write("/site/t.yaml", text);
    const m::Stack s = d.Load(StackNaming("t.yaml"));
    return ErrorOf([&] { gp::layers::StackTask(s); });
  };
  CHECK(error_of(kTask + "lora: {rnak: 8}\n") ==
        "2 " + task + ":6:8: unknown key \"lora.rnak\" (did you mean \"rank\"?)");
  CHECK(error_of(kTask + "parallel: {gpus: 0}\n").rfind("2 " + task + ":6:", 0) == 0);
  CHECK(error_of("apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\nmethod: lora\n") ==
        "2 " + task +
            ":1:1: name the model: model: NAME (gpuprep size --list-models), params: N, "
            "recommender.dense_layers or multimodal.preset");
  // A recommender described by its dense layers alone, and a multimodal preset, name their model.
  CHECK(error_of("apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\n"
                 "recommender: {dense_layers: [512, 256, 16], over_layers: [1024, 1]}\n"
                 "host: {embedding_rows: 1e6, embedding_dim: 16}\n") == "no error");
  CHECK(error_of("apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\n"
                 "multimodal: {preset: llava-1.5-7b-stage2}\n") == "no error");
  CHECK(error_of("apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\n"
                 "multimodal: {preset: llava-1.5-7b-stage2, vision: llava-1.5-7b-stage2}\n")
            .rfind("2 " + task + ":4:", 0) == 0);
  CHECK(
      error_of("apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\nconfig: config.json\n") ==
      "2 " + task +
          ":4:9: a task named by a stack gives its model as model: NAME or params: N (a config.json is read "
          "only by gpuprep size --task)");
  CHECK(
      error_of("apiVersion: gpuprep/v1\nkind: Stack\nmetadata: {name: t}\n").rfind("2 " + task + ":2:", 0) ==
      0);

  // The verbs load the stack first: doctor and manifest validate stop with one line, exit 2.
  d.root.Write("/site/t.yaml", kTask + "lora: {rnak: 8}\n");
  auto doctor =
      gp::test::Gpuprep({"doctor", "--json", "--root", std::string(GP_FIXTURES) + "/hosts/healthy-h100",
                         "--manifest", d.Path("/site/stack.yaml")});
  CHECK(doctor.code == 2);
  CHECK(doctor.out.empty());
  CHECK(doctor.err ==
        "gpuprep: error: " + task + ":6:8: unknown key \"lora.rnak\" (did you mean \"rank\"?)\n");
  // manifest validate checks the whole stack (its claims too): a child of an embedded stack.
  d.root.Write(
      "/site/child.yaml",
      "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\nmetadata: {name: c}\n"
      "workload: {task: t.yaml}\n");
  auto validate = gp::test::Gpuprep({"manifest", "validate", d.Path("/site/child.yaml")});
  CHECK(validate.code == 2);
  CHECK(validate.err == doctor.err);
  d.root.Write("/site/t.yaml", kTask);
  auto ok = gp::test::Gpuprep({"manifest", "validate", d.Path("/site/child.yaml")});
  CHECK(ok.code == 0);
  CHECK(ok.out == d.Path("/site/child.yaml") + ": ok (kind Stack)\n");
}
