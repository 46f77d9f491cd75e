// The PCI probe reads each GPU's subsystem ids from sysfs, so boards that share a device id resolve to the
// right catalogue entry (A2 and A16 are both 10de:25b6), and NVSwitches by every id the nvswitch driver
// accepts.
#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "probe/host_json.h"
#include "probe/steps.h"
#include "support/temp_dir.h"
#include "sys/fs.h"

using namespace gp;

namespace {

// A temporary sysfs tree: /sys/bus/pci/devices/<address>/{vendor,device,class,subsystem_*} as the kernel
// writes them ("0x10de\n").
class PciTree {
 public:
  void Device(const std::string& addr, const std::string& device, const std::string& klass,
              const std::string& sub_vendor, const std::string& sub_device) {
    const std::string dir = "/sys/bus/pci/devices/" + addr;
    tmp_.Write(dir + "/vendor", "0x10de\n");
    tmp_.Write(dir + "/device", device + "\n");
    tmp_.Write(dir + "/class", klass + "\n");
    if (!sub_vendor.empty()) tmp_.Write(dir + "/subsystem_vendor", sub_vendor + "\n");
    if (!sub_device.empty()) tmp_.Write(dir + "/subsystem_device", sub_device + "\n");
  }
  probe::HostFacts Probe() const {
    sys::DiskFs fs(tmp_.path);
    probe::ProbeEnv env;
    env.fs = &fs;
    env.compat = &manifest::EmbeddedCompat();
    probe::HostFacts facts;
    probe::ProbePci(env, facts);
    return facts;
  }

 private:
  test::TempDir tmp_{"gpuprep-pci"};
};

}  // namespace

TEST_CASE("pci: subsystem ids tell A2 from A16 (one device id, 10de:25b6)", "[probe]") {
  PciTree t;
  t.Device("0000:17:00.0", "0x25b6", "0x030200", "0x10de", "0x157e");  // README: NVIDIA A2 | 25B6 10DE 157E
  t.Device("0000:31:00.0", "0x25b6", "0x030200", "0x10de", "0x14a9");  // README: NVIDIA A16 | 25B6 10DE 14A9
  t.Device("0000:4b:00.0", "0x25b6", "0x030200", "", "");              // no subsystem files
  t.Device("0000:65:00.0", "0x25B6", "0x030200", "0x10DE", "0x9999");  // a board the README does not list
  probe::HostFacts h = t.Probe();
  REQUIRE(h.gpus.size() == 4);
  CHECK(h.gpus[0].name == "A2");
  CHECK(h.gpus[0].subsystem_vendor_id == "0x10de");
  CHECK(h.gpus[0].subsystem_device_id == "0x157e");
  CHECK(h.gpus[1].name == "A16");
  CHECK(h.gpus[2].name == "A2 / A16");  // pci.ids' name for the device id
  CHECK(h.gpus[2].subsystem_vendor_id.empty());
  CHECK(h.gpus[3].name == "A2 / A16");
  CHECK(h.gpus[3].subsystem_device_id == "0x9999");  // lower-cased as read
  for (const auto& g : h.gpus) {
    CHECK(g.known);
    CHECK(g.architecture == "ampere");
    CHECK(g.compute_capability == "8.6");
  }
  REQUIRE(h.nvidia_pci.size() == 4);
  CHECK(h.nvidia_pci[1].subsystem_device_id == "0x14a9");

  // The doctor JSON carries them, and reading it back keeps the board (launch --host node.json).
  nlohmann::json j = probe::HostToJson(h);
  CHECK(j["gpus"][1]["subsystem_vendor_id"] == "0x10de");
  CHECK(j["gpus"][1]["subsystem_device_id"] == "0x14a9");
  CHECK(j["gpus"][2]["subsystem_device_id"].is_null());
  CHECK(j["nvidia_pci"][0]["subsystem_device_id"] == "0x157e");
  probe::HostFacts back = probe::HostFromJson(j, "node.json");
  CHECK(back.gpus[1].subsystem_device_id == "0x14a9");
  CHECK(back.gpus[2].subsystem_device_id.empty());
  CHECK(back.nvidia_pci[0].subsystem_vendor_id == "0x10de");
}

TEST_CASE("pci: NVSwitches by every id the nvswitch driver accepts, whatever their class", "[probe]") {
  PciTree t;
  t.Device("0000:05:00.0", "0x1af1", "0x068000", "", "");  // LR10 (A100 HGX)
  t.Device("0000:06:00.0", "0x22a3", "0x068000", "", "");  // LS10 (H100 HGX)
  t.Device("0000:07:00.0", "0x22a8", "0x060400", "", "");  // LS10 PCI-PCI bridge function: not class 0x0680
  t.Device("0000:18:00.0", "0x2330", "0x030200", "0x10de", "0x16c1");
  probe::HostFacts h = t.Probe();
  CHECK(h.nvswitch_count == 3);
  REQUIRE(h.gpus.size() == 1);
  CHECK(h.gpus[0].name == "H100 80GB HBM3");
}

TEST_CASE("pci: the ids a real H200 board shows in sysfs", "[probe]") {
  // Read on an H200 VM (device 0x2335, class 0x030200, subsystem 0x10de/0x18bf; nvidia-smi: "NVIDIA H200",
  // compute_cap 9.0, open kernel module 580.159.04).
  PciTree t;
  t.Device("0000:00:06.0", "0x2335", "0x030200", "0x10de", "0x18bf");
  probe::HostFacts h = t.Probe();
  REQUIRE(h.gpus.size() == 1);
  CHECK(h.gpus[0].name == "H200");
  CHECK(h.gpus[0].compute_capability == "9.0");
  const manifest::GpuModel* m = manifest::EmbeddedCompat().GpuByPci("0x2335", "0x10de", "0x18bf");
  REQUIRE(m);
  CHECK(m->support.at(580)->str() == "580.65.06");  // a data-center release on NVIDIA's record
  CHECK(m->SupportAt(Version::Must("580.159.04")).state == manifest::BoardSupport::State::kListed);
}
