// The table of layers is the one list: names, doctor's rows, apply's layers and their plans, `--only`
// validation, verify's checks and defaults all derive from it.
#include "layers/table.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/plan.h"
#include "layers/sample.h"
#include "plan/planner.h"
#include "support/plan_host.h"
#include "util/error.h"

using namespace gp;

TEST_CASE("the table of layers: order, names and the rows apply installs", "[layers][table]") {
  std::vector<std::string> names;
  for (const auto& l : layers::Layers()) {
    names.emplace_back(l.name);
    CHECK(l.check != nullptr);
    CHECK(layers::FindLayer(l.name) == &l);
  }
  CHECK(names == std::vector<std::string>{"os", "host", "gpu", "driver", "fabricmanager", "cuda", "cudnn",
                                          "nccl", "docker", "container_toolkit", "image", "network"});
  CHECK(names == layers::LayerNames());
  CHECK(layers::ReportNames().front() == "stack");
  CHECK(layers::FindLayer("stack") == nullptr);  // doctor's stack row is not a layer
  CHECK(layers::ApplyLayers() == std::vector<std::string>{"driver", "fabricmanager", "cuda", "cudnn", "nccl",
                                                          "docker", "container_toolkit", "image"});
  std::vector<std::string> with_plan;  // apply's layers are exactly the rows with a plan
  for (const auto& l : layers::Layers())
    if (l.plan) with_plan.emplace_back(l.name);
  CHECK(layers::ApplyLayers() == with_plan);
}

TEST_CASE("--only and --skip accept only the layers apply installs", "[layers][table]") {
  CHECK(layers::ParseLayerList("--only", {"image,driver"}) == std::vector<std::string>{"image", "driver"});
  try {
    layers::ParseLayerList("--only", {"os"});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "--only: layer \"os\" is checked by doctor but installs nothing (layers: driver, fabricmanager, "
          "cuda, "
          "cudnn, nccl, docker, container_toolkit, image)");
    CHECK(e.code() == kExitUsage);
  }
  try {
    layers::ParseLayerList("--skip", {"zzz"});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("--skip: unknown layer \"zzz\" (layers: driver, ", 0) == 0);
  }
}

TEST_CASE("verify's default layers come from the table's rows", "[layers][table]") {
  test::Inputs t;
  t.host.docker.engine_reachable = true;
  CHECK(layers::DefaultVerifyLayers(t.stack, t.host) ==
        std::vector<std::string>{"driver", "fabricmanager", "cuda", "cudnn", "nccl", "docker",
                                 "container_toolkit", "image"});
  t.host.nvswitch_count = 0;
  t.host.docker.engine_reachable = false;
  t.host.gpus.clear();
  CHECK(layers::DefaultVerifyLayers(t.stack, t.host) == std::vector<std::string>{"cuda", "cudnn", "nccl"});
  for (const auto& name : layers::DefaultVerifyLayers(t.stack, t.host))
    CHECK(layers::FindLayer(name)->plan != nullptr);
}

TEST_CASE("each row that installs has a plan and a verify; the plan's layers follow the table",
          "[layers][table]") {
  for (const auto& l : layers::Layers()) {
    INFO(l.name);
    CHECK((l.plan == nullptr) == (l.verify == nullptr));  // what apply installs, verify checks
    if (!l.plan) CHECK(l.verified_by_default == nullptr);
  }
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  plan::PlanInput in;
  in.stack = &stack;
  in.facts = &facts;
  std::vector<std::string> planned;
  for (const auto& d : test::PlanHost(in, root.fs()).layers) planned.push_back(d.name);
  CHECK(planned == layers::ApplyLayers());
}

TEST_CASE("verify dispatches through the table; a row without a verify is a skip", "[layers][table]") {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  apply::VerifyEnv env{&root.fs(), nullptr, &stack, &facts, nullptr};
  const verdict::LayerReport os = layers::VerifyLayer("os", env);
  CHECK(os.name == "os");
  CHECK(os.status == verdict::Status::kSkip);
  CHECK(os.detail == "verify has no active check for this layer");
  // The driver's row: no module is loaded under this root, and its fix says how to load one.
  const verdict::LayerReport driver = layers::VerifyLayer("driver", env);
  CHECK(driver.name == "driver");
  CHECK(driver.status == verdict::Status::kFail);
  CHECK(driver.detail.find("no nvidia kernel module is loaded") != std::string::npos);
}

TEST_CASE("the container layers read the docker layer's decision, not shared state", "[layers][table]") {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  plan::PlanInput in;
  in.stack = &stack;
  in.facts = &facts;
  auto kind = [](const plan::Plan& p, const std::string& name) {
    for (const auto& l : p.layers)
      if (l.name == name) return l.kind;
    FAIL("no layer " + name);
    return plan::LayerDecision::Kind::kNone;
  };
  stack.image.ref = "nvcr.io/nvidia/pytorch:23.10-py3";
  stack.docker.present = true;
  stack.docker.packages = {{"docker.io", ""}};
  // No engine on the host and docker left alone: nothing to pull into.
  in.skip = {"docker"};
  const plan::Plan skipped = test::PlanHost(in, root.fs());
  CHECK(kind(skipped, "docker") == plan::LayerDecision::Kind::kSkipped);
  CHECK(kind(skipped, "image") != plan::LayerDecision::Kind::kInstall);
  // An engine that answers, docker still left alone: the image is pulled into it.
  facts.docker.engine_reachable = true;
  facts.docker.version = "28.3.2";
  const plan::Plan present = test::PlanHost(in, root.fs());
  CHECK(kind(present, "image") == plan::LayerDecision::Kind::kInstall);
  // An engine too old for the stack is refused, and the image is not pulled into it.
  in.skip.clear();
  facts.docker.version = "18.09.1";
  const plan::Plan old = test::PlanHost(in, root.fs());
  CHECK(kind(old, "docker") == plan::LayerDecision::Kind::kRefused);
  CHECK(kind(old, "image") != plan::LayerDecision::Kind::kInstall);
}
