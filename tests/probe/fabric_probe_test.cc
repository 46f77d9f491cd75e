// The fabric probe step over the HGX B200 and GB200 fixture trees (tests/fixtures/hosts/README.md): NVLink
// switch bridges found by their VPD, the board deciding when the VPD cannot be read (as for a non-root
// user, where the vpd file is 0600), ib_umad in the kernel's modules tree, NVLSM from dpkg; and NVML's
// fabric state calls through the sys seam with stand-in functions.
#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "probe/parsers.h"
#include "probe/probe.h"
#include "sys/fs.h"
#include "sys/nvml_fabric.h"
#include "util/strings.h"

using namespace gp;
using probe::HostFacts;

namespace {

// A fixture tree read as a non-root user: every `vpd` file exists but cannot be read (EACCES). Not the kit's
// LiveDiskFs (support/fakes.h): the tree stays a --root tree; only its reads of `vpd` change.
class NonRootFs : public sys::DiskFs {
 public:
  using DiskFs::DiskFs;
  std::optional<std::string> ReadPrefix(const std::string& path, size_t max) const override {
    if (EndsWith(path, "/vpd")) return std::nullopt;
    return DiskFs::ReadPrefix(path, max);
  }
  std::optional<std::string> Read(const std::string& path) const override {
    if (EndsWith(path, "/vpd")) return std::nullopt;
    return DiskFs::Read(path);
  }
};

HostFacts Probe(const sys::Fs& fs) {
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  return probe::ProbeHost(env);
}

std::string Tree(const std::string& name) { return std::string(GP_FIXTURES) + "/hosts/" + name; }

bool HasNote(const HostFacts& h, const std::string& part) {
  for (const auto& n : h.probe_notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

void CheckHgxB200(const HostFacts& h) {
  REQUIRE(h.gpus.size() == 8);
  CHECK(h.gpus[0].name == "B200");
  CHECK(h.nvswitch_count == 0);  // no NVSwitch is a PCI device of the host
  CHECK(h.fabric.platform == "hgx-blackwell");
  CHECK(h.fabricmanager.installed);
  CHECK(h.fabricmanager.version == "580.95.05");
  CHECK(h.fabricmanager.enabled);
  CHECK(h.fabric.nvlsm.installed);
  CHECK(h.fabric.nvlsm.version == "2025.06.10");
  CHECK_FALSE(h.fabric.nvlsm.enabled);  // no unit of its own: Fabric Manager starts it
  CHECK_FALSE(h.fabric.nvlsm.running);  // not known under --root
  CHECK(h.fabric.ib_umad_available);
  CHECK_FALSE(h.fabric.ib_umad_loaded);
  CHECK(h.fabric.ib_umad_detail.find("modules.dep") != std::string::npos);
}

}  // namespace

TEST_CASE("fabric probe hgx-b200: four bridges among twelve ConnectX-7 functions", "[probe][fabric]") {
  sys::DiskFs fs(Tree("hgx-b200"));
  HostFacts h = Probe(fs);
  CheckHgxB200(h);
  CHECK(h.fabric.decided_by == "vpd");
  CHECK(h.fabric.bridges == 4);
  REQUIRE(h.fabric.connectx.size() == 12);
  int bridges = 0, nics = 0;
  for (const auto& c : h.fabric.connectx) {
    INFO(c.address << " " << c.vpd << " " << c.detail);
    if (c.vpd == "bridge") ++bridges;
    if (c.vpd == "nic") ++nics;
  }
  CHECK(bridges == 4);
  CHECK(nics == 8);
  CHECK(h.fabric.connectx[0].address == "0000:05:00.0");
  CHECK(h.fabric.connectx[0].vpd == "bridge");
  CHECK_FALSE(HasNote(h, "fabric:"));
}

TEST_CASE("fabric probe hgx-b200 as non-root: decided from the board, the VPD not read", "[probe][fabric]") {
  for (const char* how : {"denied reads", "nonroot tree"}) {
    INFO(how);
    NonRootFs denied(Tree("hgx-b200"));
    sys::DiskFs tree(Tree("hgx-b200-nonroot"));
    HostFacts h = Probe(std::string(how) == "denied reads" ? static_cast<const sys::Fs&>(denied) : tree);
    CheckHgxB200(h);
    CHECK(h.fabric.decided_by == "board");
    CHECK(h.fabric.bridges == 0);
    REQUIRE(h.fabric.connectx.size() == 12);
    for (const auto& c : h.fabric.connectx) CHECK(c.vpd == "unreadable");
    CHECK(HasNote(h, "fabric: the VPD of 12 ConnectX-7 function(s) could not be read"));
  }
}

TEST_CASE("fabric probe gb200-tray: a Grace Blackwell compute tray, NICs without the field",
          "[probe][fabric]") {
  sys::DiskFs fs(Tree("gb200-tray"));
  HostFacts h = Probe(fs);
  REQUIRE(h.gpus.size() == 4);
  CHECK(h.gpus[0].device_id == "0x2941");
  CHECK(h.arch == "aarch64");
  CHECK(h.fabric.platform == "grace-blackwell");
  CHECK(h.fabric.bridges == 0);
  REQUIRE(h.fabric.connectx.size() == 4);
  for (const auto& c : h.fabric.connectx) CHECK(c.vpd == "nic");
  CHECK_FALSE(h.fabric.ib_umad_available);  // not looked up off HGX Blackwell
}

TEST_CASE("fabric probe: ordinary hosts change nothing", "[probe][fabric]") {
  // Every older fixture has one ConnectX-7 (15b3:1021) without a vpd file; blackwell-old-driver has B200s.
  for (const char* name : {"healthy-h100", "blackwell-old-driver", "open-module"}) {
    INFO(name);
    sys::DiskFs fs(Tree(name));
    HostFacts h = Probe(fs);
    CHECK(h.fabric.platform.empty());
    CHECK(h.fabric.connectx.empty());
    CHECK_FALSE(h.fabric.nvlsm.installed);
  }
}

TEST_CASE("kernel module lists: modules.builtin, modules.dep and /proc/modules", "[probe][fabric]") {
  using probe::ModulesFileLists;
  using probe::ProcModulesHas;
  CHECK(ModulesFileLists("kernel/drivers/infiniband/core/ib_umad.ko\n", "ib_umad"));
  CHECK(ModulesFileLists("a.ko:\nkernel/drivers/infiniband/core/ib_umad.ko.zst: kernel/ib_core.ko.zst\n",
                         "ib_umad"));
  CHECK(ModulesFileLists("extra/ib_umad.ko.xz:", "ib_umad"));
  CHECK(ModulesFileLists("ib_umad.ko:", "ib_umad"));
  // A dependency of another module is not the module itself; similar names are not it.
  CHECK_FALSE(
      ModulesFileLists("kernel/x/rdma_ucm.ko: kernel/drivers/infiniband/core/ib_umad.ko\n", "ib_umad"));
  CHECK_FALSE(ModulesFileLists("kernel/x/my_ib_umad.ko:\nkernel/x/ib_umad2.ko:\n", "ib_umad"));
  CHECK_FALSE(ModulesFileLists("", "ib_umad"));
  CHECK(ProcModulesHas("ib_core 1 2 - Live 0x0\nib_umad 45056 0 - Live 0x0000000000000000\n", "ib_umad"));
  CHECK_FALSE(ProcModulesHas("ib_umad2 1 0 - Live 0x0\n", "ib_umad"));
  CHECK_FALSE(ProcModulesHas("x ib_umad 1\n", "ib_umad"));
}

namespace {
int g_v3_answer = 0;
unsigned char g_state = 0;
int g_status = 0;
int g_v2_calls = 0;
int V3(void*, sys::nvml::GpuFabricInfoV3* info) {
  if (info->version != sys::nvml::kGpuFabricInfoV3Version) return sys::nvml::kArgumentVersionMismatch;
  if (g_v3_answer != 0) return g_v3_answer;
  info->state = g_state;
  info->status = g_status;
  return 0;
}
int V2(void*, sys::nvml::GpuFabricInfoV2* info) {
  ++g_v2_calls;
  if (info->version != sys::nvml::kGpuFabricInfoV2Version) return sys::nvml::kArgumentVersionMismatch;
  info->state = sys::nvml::kFabricStateInProgress;
  info->status = 0;
  return 0;
}
int V1(void*, sys::nvml::GpuFabricInfo* info) {
  info->state = sys::nvml::kFabricStateCompleted;
  info->status = 0;
  return 0;
}
}  // namespace

TEST_CASE("NVML fabric state: v3, v2 on a version mismatch, the old call, NOT_SUPPORTED", "[probe][fabric]") {
  using sys::nvml::FabricCalls;
  using sys::nvml::ReadFabric;
  sys::NvmlDevice d;
  g_v3_answer = 0;
  g_state = sys::nvml::kFabricStateCompleted;
  g_status = 0;
  ReadFabric(FabricCalls{V3, V2, V1}, nullptr, d);
  CHECK(d.fabric_state == 3u);
  CHECK(d.fabric_status == 0);
  CHECK(g_v2_calls == 0);

  // A driver that knows only the v2 layout answers ARGUMENT_VERSION_MISMATCH to v3.
  d = {};
  g_v3_answer = sys::nvml::kArgumentVersionMismatch;
  ReadFabric(FabricCalls{V3, V2, V1}, nullptr, d);
  CHECK(d.fabric_state == 2u);
  CHECK(g_v2_calls == 1);

  // Hopper-era and PCIe boards: NOT_SUPPORTED is an answer, state "not supported", no status.
  d = {};
  g_v3_answer = sys::nvml::kNotSupported;
  ReadFabric(FabricCalls{V3, V2, V1}, nullptr, d);
  CHECK(d.fabric_state == 0u);
  CHECK_FALSE(d.fabric_status);

  // Any other error leaves the state unknown; so does a library with neither symbol.
  d = {};
  g_v3_answer = sys::nvml::kUnknown;
  ReadFabric(FabricCalls{V3, V2, V1}, nullptr, d);
  CHECK_FALSE(d.fabric_state);
  ReadFabric(FabricCalls{}, nullptr, d);
  CHECK_FALSE(d.fabric_state);

  // Without the versioned symbol, the first call.
  ReadFabric(FabricCalls{nullptr, nullptr, V1}, nullptr, d);
  CHECK(d.fabric_state == 3u);
}
