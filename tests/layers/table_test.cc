// The table of layers is the one list: names, doctor's rows, apply's layers, `--only` validation and verify's
// defaults all derive from it.
#include "layers/table.h"

#include <catch2/catch.hpp>

#include "layers/sample.h"
#include "plan/planner.h"
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
                                          "nccl", "docker", "container_toolkit", "image"});
  CHECK(names == layers::LayerNames());
  CHECK(layers::ReportNames().front() == "stack");
  CHECK(layers::FindLayer("stack") == nullptr);  // doctor's stack row is not a layer
  CHECK(plan::ApplyLayers() == std::vector<std::string>{"driver", "fabricmanager", "cuda", "cudnn", "nccl",
                                                        "docker", "container_toolkit", "image"});
  CHECK(plan::ApplyLayers() == layers::InstallableLayerNames());
}

TEST_CASE("--only and --skip accept only the layers apply installs", "[layers][table]") {
  CHECK(plan::ParseLayerList("--only", {"image,driver"}) == std::vector<std::string>{"image", "driver"});
  try {
    plan::ParseLayerList("--only", {"os"});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "--only: layer \"os\" is checked by doctor but installs nothing (layers: driver, fabricmanager, "
          "cuda, "
          "cudnn, nccl, docker, container_toolkit, image)");
    CHECK(e.code() == kExitUsage);
  }
  try {
    plan::ParseLayerList("--skip", {"zzz"});
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
    CHECK(layers::FindLayer(name)->installs);
}
