// The PCI link, config space and NVML health of each GPU as the probe reads them: the kernel's link-speed
// strings, the health fixture trees (tests/fixtures/health/, written by make_health_hosts.py) under
// --root, and the same trees seen as a live host whose NVML answers per bus id.
#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "probe/parsers.h"
#include "probe/probe.h"
#include "probe/steps.h"
#include "support/fakes.h"
#include "sys/fs.h"

using namespace gp;

namespace {

std::string HealthTree(const std::string& name) { return std::string(GP_FIXTURES) + "/health/" + name; }

probe::HostFacts ProbeTree(const std::string& name) {
  sys::DiskFs fs(HealthTree(name));
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  return probe::ProbeHost(env);
}

// NVML answers from `nvml` (the tree read as a live host), and the probe asks it for every GPU's bus id.
class AnsweringNative : public sys::NativeLibs {
 public:
  sys::LibCall CudaRuntimeVersion(const std::vector<std::string>&) override { return {}; }
  sys::LibCall CudnnVersion(const std::vector<std::string>&) override { return {}; }
  sys::LibCall NcclVersion(const std::vector<std::string>&) override { return {}; }
  sys::NvmlInfo Nvml(const std::vector<std::string>& bus_ids) override {
    asked = bus_ids;
    sys::NvmlInfo r = nvml;
    for (const auto& id : bus_ids) {
      auto it = answers.find(id);
      r.buses.push_back(it == answers.end() ? sys::NvmlBusAnswer{id, 6, {}} : it->second);
    }
    return r;
  }
  sys::CudaDriverInfo CudaDriver() override { return {}; }
  sys::NvmlInfo nvml;
  std::map<std::string, sys::NvmlBusAnswer> answers;
  std::vector<std::string> asked;
};

}  // namespace

TEST_CASE("link speed: every form the kernel writes, and what is not a PCIe speed", "[probe][health]") {
  using probe::ParseLinkSpeed;
  CHECK(ParseLinkSpeed("2.5 GT/s\n") == 2.5);  // kernels before pci_speed_string's " PCIe" suffix
  CHECK(ParseLinkSpeed("5 GT/s") == 5.0);
  CHECK(ParseLinkSpeed("8 GT/s") == 8.0);
  CHECK(ParseLinkSpeed("16 GT/s") == 16.0);
  CHECK(ParseLinkSpeed("32 GT/s") == 32.0);
  CHECK(ParseLinkSpeed("2.5 GT/s PCIe\n") == 2.5);
  CHECK(ParseLinkSpeed("5.0 GT/s PCIe") == 5.0);
  CHECK(ParseLinkSpeed("8.0 GT/s PCIe") == 8.0);
  CHECK(ParseLinkSpeed("16.0 GT/s PCIe") == 16.0);
  CHECK(ParseLinkSpeed("32.0 GT/s PCIe") == 32.0);
  CHECK(ParseLinkSpeed("64.0 GT/s PCIe") == 64.0);
  CHECK_FALSE(ParseLinkSpeed("Unknown"));
  CHECK_FALSE(ParseLinkSpeed("Unknown speed"));
  CHECK_FALSE(ParseLinkSpeed("8x AGP"));
  CHECK_FALSE(ParseLinkSpeed("133 MHz PCI-X 533"));
  CHECK_FALSE(ParseLinkSpeed(""));
  CHECK_FALSE(ParseLinkSpeed("GT/s"));
  CHECK_FALSE(ParseLinkSpeed("-8.0 GT/s PCIe"));
  CHECK_FALSE(ParseLinkSpeed("8.0 GT/s PCIe extra"));
  CHECK_FALSE(ParseLinkSpeed("1e3 GT/s"));
}

TEST_CASE("health trees: link width and speed, the port above, config space", "[probe][health]") {
  auto x8 = ProbeTree("pcie-x8");
  REQUIRE(x8.gpus.size() == 4);
  CHECK(x8.gpus[1].pci == "0000:2a:00.0");
  CHECK(x8.gpus[1].pcie.width == 8);
  CHECK(x8.gpus[1].pcie.max_width == 16);
  CHECK(x8.gpus[0].pcie.width == 16);
  CHECK(x8.gpus[1].pcie.speed == 32.0);
  CHECK(x8.gpus[1].pcie.max_speed == 32.0);
  CHECK(x8.gpus[1].pcie.port_max_speed == 32.0);
  CHECK_FALSE(x8.gpus[1].config_all_ones);
  CHECK_FALSE(x8.gpus[1].nvml_status);  // --root: NVML is not asked

  auto gen4 = ProbeTree("gen5-in-gen4");
  CHECK(gen4.gpus[3].pcie.speed == 16.0);
  CHECK(gen4.gpus[3].pcie.max_speed == 32.0);
  CHECK(gen4.gpus[3].pcie.port_max_speed == 16.0);

  auto off = ProbeTree("off-bus");
  CHECK(off.gpus[2].config_all_ones);
  CHECK_FALSE(off.gpus[1].config_all_ones);

  auto unbound = ProbeTree("unbound");
  CHECK(unbound.gpus[3].driver.empty());
  CHECK(unbound.gpus[2].driver == "nvidia");

  // A tree without the files (every host tree before these): nothing known, nothing judged.
  sys::DiskFs fs(std::string(GP_FIXTURES) + "/hosts/healthy-h100");
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  REQUIRE_FALSE(h.gpus.empty());
  CHECK_FALSE(h.gpus[0].pcie.width);
  CHECK_FALSE(h.gpus[0].pcie.speed);
  CHECK_FALSE(h.gpus[0].pcie.port_max_speed);
  CHECK_FALSE(h.gpus[0].config_all_ones);
}

TEST_CASE("live: NVML is asked for every GPU function by bus id; its answers land on that GPU",
          "[probe][health]") {
  test::LiveDiskFs fs(HealthTree("unbound"));
  AnsweringNative native;
  native.nvml.loaded = true;
  native.nvml.device_count = 3;
  sys::NvmlBusAnswer lost{"0000:2a:00.0", 15, {}};
  sys::NvmlBusAnswer ok{"0000:18:00.0", 0, {}};
  ok.health.pstate = 0;
  ok.health.remap_pending = true;
  native.answers = {{"0000:18:00.0", ok}, {"0000:2a:00.0", lost}, {"0000:ab:00.0", {"0000:ab:00.0", 0, {}}}};
  probe::ProbeEnv env;
  env.fs = &fs;
  env.native = &native;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  // Every GPU function, the unbound one included: the driver may have unbound a GPU that fell off the bus.
  CHECK(native.asked ==
        std::vector<std::string>{"0000:18:00.0", "0000:2a:00.0", "0000:ab:00.0", "0000:db:00.0"});
  REQUIRE(h.gpus.size() == 4);
  CHECK(h.gpus[0].nvml_status == 0);
  CHECK(h.gpus[0].health.pstate == 0u);
  CHECK(h.gpus[0].health.remap_pending == true);
  CHECK(h.gpus[1].nvml_status == 15);
  CHECK(h.gpus[3].nvml_status == 6);  // NOT_FOUND

  // A library that did not load: whatever its stand-in would answer per bus id is not taken.
  AnsweringNative silent;
  silent.nvml.loaded = false;
  env.native = &silent;
  auto s = probe::ProbeHost(env);
  CHECK_FALSE(s.gpus[0].nvml_status);
}
