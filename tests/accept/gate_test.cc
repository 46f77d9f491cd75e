// The gate before measuring: doctor's gpu, driver and fabricmanager layers (and docker and
// container_toolkit for the container runtime) must not fail; image never blocks.
#include "accept/gate.h"

#include <catch2/catch.hpp>

namespace {

std::vector<gp::verdict::LayerReport> Layers(const std::string& failing) {
  std::vector<gp::verdict::LayerReport> out;
  for (const char* n : {"os", "gpu", "driver", "fabricmanager", "docker", "container_toolkit", "image"}) {
    gp::verdict::LayerReport r;
    r.name = n;
    r.status = n == failing ? gp::verdict::Status::kFail : gp::verdict::Status::kOk;
    r.detail = n == failing ? "broken" : "";
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST_CASE("accept gate: the layers that block measuring", "[accept]") {
  CHECK_FALSE(gp::accept::CheckGate(Layers(""), "container"));
  CHECK_FALSE(gp::accept::CheckGate(Layers("image"), "container"));
  CHECK_FALSE(gp::accept::CheckGate(Layers("os"), "container"));
  CHECK(gp::accept::CheckGate(Layers("driver"), "container")->layer == "driver");
  CHECK(gp::accept::CheckGate(Layers("fabricmanager"), "host")->layer == "fabricmanager");
  CHECK(gp::accept::CheckGate(Layers("docker"), "container")->layer == "docker");
  CHECK_FALSE(gp::accept::CheckGate(Layers("docker"), "host"));
  auto fewer = Layers("");
  fewer.erase(fewer.begin() + 1);  // no gpu layer at all
  CHECK(gp::accept::CheckGate(fewer, "host")->layer == "gpu");
}
