// The embedded compatibility facts and their look-ups; broken compat documents.
#include <catch2/catch.hpp>

#include "manifest/helpers.h"
#include "manifest/loader.h"

using gp::Version;
using gp::test::ErrorOf;
namespace m = gp::manifest;

TEST_CASE("MinDriverFor: exact rows, GA for major.minor, nearest update below", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(c.MinDriverFor(Version::Must("12.2.2"))->str() == "535.104.05");
  CHECK(c.MinDriverFor(Version::Must("12.2"))->str() == "535.54.03");  // 12.2 = 12.2 GA
  CHECK(c.MinDriverFor(Version::Must("12.2.0"))->str() == "535.54.03");
  CHECK(c.MinDriverFor(Version::Must("12.2.3"))->str() == "535.104.05");  // no 12.2.3 row: 12.2 Update 2
  CHECK(c.MinDriverFor(Version::Must("13.0"))->str() == "580.65.06");
  CHECK(c.MinDriverFor(Version::Must("13.0.3"))->str() == "580.126.20");  // redistrib_13.0.3.json's driver
  CHECK(c.MinDriverFor(Version::Must("13.1.0"))->str() == "590.44.01");
  CHECK(c.MinDriverFor(Version::Must("12.8"))->str() == "570.26");
  CHECK(c.MinDriverFor(Version::Must("12.5.0.23"))->str() == "555.42.02");
  CHECK(c.MinDriverFor(Version::Must("11.0.1"))->str() == "450.36.06");
  CHECK_FALSE(c.MinDriverFor(Version::Must("12.7")).has_value());  // NVIDIA never shipped 12.7
  CHECK_FALSE(c.MinDriverFor(Version::Must("10.2")).has_value());
}

TEST_CASE("Table 3 is complete and ordered newest first", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(c.cuda_min_driver.size() ==
        56);  // 53 rows of Table 3, two secondary 13.3 rows, 13.0.3's packaged driver
  for (size_t i = 1; i < c.cuda_min_driver.size(); ++i)
    CHECK(c.cuda_min_driver[i - 1].cuda > c.cuda_min_driver[i].cuda);
  CHECK(c.cuda_min_driver.front().cuda.str() == "13.3.1");
  CHECK(c.cuda_min_driver.front().secondary);
  CHECK_FALSE(c.cuda_min_driver[2].secondary);
}

TEST_CASE("MinorCompatFor per CUDA major", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  REQUIRE(c.MinorCompatFor(13));
  CHECK(c.MinorCompatFor(13)->min_branch == 580);
  CHECK_FALSE(c.MinorCompatFor(13)->exact_min.has_value());
  CHECK(c.MinorCompatFor(12)->min_branch == 525);
  CHECK(c.MinorCompatFor(12)->exact_min->str() == "525.60.13");
  CHECK(c.MinorCompatFor(11)->exact_min->str() == "450.80.02");
  CHECK(c.MinorCompatFor(10) == nullptr);
}

TEST_CASE("GpuByPciId, NVSwitches, images", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  const m::GpuModel* h100 = c.GpuByPciId("0x2330");
  REQUIRE(h100);
  CHECK(h100->name == "H100 80GB HBM3");  // the driver README's product name
  CHECK(h100->arch == "hopper");
  CHECK(h100->cc.str() == "9.0");
  CHECK(h100->datacenter);
  CHECK(h100->min_cuda.str() == "11.8");
  CHECK(h100->min_driver_branch == 520);
  CHECK(c.GpuByPciId("0X2330") == h100);
  CHECK(c.GpuByPciId("2330") == h100);
  CHECK(c.GpuByPci("0x2330", "0x10de", "0x16c1") == h100);
  CHECK(c.GpuByPciId("0x2901")->min_driver_branch == 570);  // B200
  CHECK(c.GpuByPciId("0x3182")->min_driver_branch == 575);  // B300
  const m::GpuModel* v100 = c.GpuByPciId("0x1db5");
  REQUIRE(v100);
  CHECK(v100->name == "Tesla V100 SXM2 32GB");
  CHECK(v100->last_driver_branch == 580);
  CHECK(v100->max_cuda_major == 12);
  CHECK_FALSE(c.GpuByPciId("0x2684")->datacenter);  // GeForce RTX 4090
  CHECK(c.GpuByPciId("0x9999") == nullptr);
  const m::ImageFacts* img = c.ImageByRef("nvcr.io/nvidia/pytorch:23.08-py3");
  REQUIRE(img);
  CHECK(img->cuda.version->str() == "12.2.1");
  CHECK(img->driver_min_branch == 535);
  const m::ImageFacts* i2512 = c.ImageByRef("nvcr.io/nvidia/pytorch:25.12-py3");
  REQUIRE(i2512);
  CHECK(i2512->cuda.version->str() == "13.1.0");
  CHECK(i2512->cudnn.unknown);
  CHECK(c.ImageByRef("nvcr.io/nvidia/pytorch:23.10-py3") == nullptr);
}

TEST_CASE("NVSwitch ids are every id the nvswitch driver accepts", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(c.nvswitch_pci_ids.size() == 33);  // LR10: 0x1ae8, 0x1af0-0x1aff; LS10: 0x22a0-0x22af
  for (const char* id : {"0x1ae8", "0x1af0", "0x1AF1", "0x1aff", "0x22a0", "0x22a3", "0x22a8", "0x22af"})
    CHECK(c.IsNvSwitch(id));
  for (const char* id : {"0x1ae9", "0x1aef", "0x229f", "0x22b0", "0x2330"}) CHECK_FALSE(c.IsNvSwitch(id));
  for (const auto& id : c.nvswitch_pci_ids) CHECK(c.GpuByPciId(id) == nullptr);  // switches are not GPUs
}

TEST_CASE("the catalogue holds the data-center GPUs of the Ampere, Ada, Hopper and Blackwell generations",
          "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  auto has = [&](const std::string& name) {
    for (const auto& g : c.gpus)
      if (g.name == name) return g.datacenter;
    return false;
  };
  for (const char* name : {"A30",
                           "A40",
                           "A10",
                           "A10G",
                           "A2",
                           "A16",
                           "A800-SXM4-80GB",
                           "A800 80GB PCIe",
                           "A100-SXM4-40GB",
                           "A100-SXM4-80GB",
                           "A100 80GB PCIe",
                           "A100-PCIE-40GB",
                           "H800",
                           "H800 PCIe",
                           "H20",
                           "H20-3e",
                           "L20",
                           "L2",
                           "L4",
                           "L40",
                           "L40S",
                           "TS4 / B100",
                           "B200",
                           "B300 SXM6 AC",
                           "GB200",
                           "GB300",
                           "GH200 120GB",
                           "GH200 480GB",
                           "GH200 144G HBM3e",
                           "H100 80GB HBM3",
                           "H100 PCIe",
                           "H100 NVL",
                           "H100",
                           "H200",
                           "H200 NVL",
                           "Tesla T4",
                           "Tesla V100 SXM2 16GB",
                           "Tesla V100 SXM2 32GB",
                           "Tesla V100 PCIe 16GB",
                           "Tesla V100 PCIe 32GB",
                           "Tesla V100S PCIe 32GB",
                           "Tesla V100 SXM3 32GB",
                           "RTX PRO 6000 Blackwell Server Edition"}) {
    INFO(name);
    CHECK(has(name));
  }
  for (const auto& g : c.gpus) {
    CHECK(g.pci_ids.size() == 1);
    CHECK_FALSE(g.name.empty());
  }
}

TEST_CASE("subsystem ids tell boards of one device id apart", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  // A2 and A16 share 10de:25b6 (README: "NVIDIA A16 | 25B6 10DE 14A9", "NVIDIA A2 | 25B6 10DE 157E").
  const m::GpuModel* a2 = c.GpuByPci("0x25b6", "0x10de", "0x157e");
  const m::GpuModel* a16 = c.GpuByPci("0x25b6", "0x10DE", "0x14A9");
  REQUIRE(a2);
  REQUIRE(a16);
  CHECK(a2->name == "A2");
  CHECK(a16->name == "A16");
  CHECK(a2->arch == "ampere");
  CHECK(a16->cc.str() == "8.6");
  // A board the README does not list, or a host that did not say: the device-wide entry (pci.ids' name).
  CHECK(c.GpuByPci("0x25b6", "0x1028", "0x157e")->name == "A2 / A16");
  CHECK(c.GpuByPci("0x25b6", "", "")->name == "A2 / A16");
  CHECK(c.GpuByPciId("25b6")->name == "A2 / A16");
  // A README row without subsystem covers every board its specific rows do not.
  CHECK(c.GpuByPci("0x20b0", "0x10de", "0x1450")->name == "A100-PG509-200");
  CHECK(c.GpuByPci("0x20b0", "0x10de", "0x145f")->name == "A100-SXM4-40GB");
  CHECK(c.GpuByPci("0x2342", "0x10de", "0x1809")->name == "GH200 480GB");
  CHECK(c.GpuByPci("0x2342", "0x10de", "0x16eb")->name == "GH200 120GB");
}

namespace {
// The first release of `branch` that lists the board, "none", or "no data".
std::string FirstIn(const m::Compat& c, const char* dev, const char* sv, const char* sd, int branch) {
  const m::GpuModel* g = c.GpuByPci(dev, sv, sd);
  REQUIRE(g);
  auto it = g->support.find(branch);
  if (it == g->support.end()) return "no data";
  return it->second ? it->second->str() : "none";
}
}  // namespace

TEST_CASE("support per driver branch: the first production release whose README lists the board",
          "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(FirstIn(c, "0x2335", "0x10de", "0x18be", 550) == "550.90.07");  // H200
  CHECK(FirstIn(c, "0x2335", "0x10de", "0x18be", 535) == "none");       // no R535 release lists it
  CHECK(FirstIn(c, "0x2329", "0x10de", "0x198b", 545) == "none");       // H20: R545 skips it
  CHECK(FirstIn(c, "0x2329", "0x10de", "0x198b", 535) == "535.161.07");
  CHECK(FirstIn(c, "0x26ba", "0x10de", "0x1957", 545) == "none");  // L20
  CHECK(FirstIn(c, "0x27b6", "0x10de", "0x1933", 545) == "none");  // L2
  CHECK(FirstIn(c, "0x20fd", "0x10de", "0x17f8", 545) == "none");  // AX800
  CHECK(FirstIn(c, "0x2bb5", "0x10de", "0x220b", 590) == "none");  // RTX PRO 6000 Blackwell Server 10de:220b
  CHECK(FirstIn(c, "0x2bb5", "0x10de", "0x220b", 580) == "580.126.09");
  CHECK(FirstIn(c, "0x20b7", "0x10de", "0x1852", 535) == "535.129.03");  // A30: late within the branch
  CHECK(FirstIn(c, "0x20b7", "0x10de", "0x1532", 535) == "535.54.03");
  CHECK(FirstIn(c, "0x26b9", "0x10de", "0x1851", 535) == "535.104.05");  // L40S, not 535.54.03
  CHECK(FirstIn(c, "0x27b8", "0x10de", "0x16ca", 525) == "525.105.17");  // L4, not 525.53
  CHECK(FirstIn(c, "0x1eb8", "0x10de", "0x12a2", 570) == "none");        // T4: the README lags
  CHECK(FirstIn(c, "0x1eb8", "0x10de", "0x12a2", 575) == "575.57.08");   // (575.51.03 is CUDA-only)
  CHECK(FirstIn(c, "0x2335", "0x10de", "0x18be", 470) == "no data");     // older than the open modules
  // The floor from the compute capability is separate: below the per-release data it is the only check.
  CHECK(c.GpuByPci("0x2335", "0x10de", "0x18be")->min_driver_branch == 520);
  const m::GpuModel* h200 = c.GpuByPci("0x2335", "0x10de", "0x18be");
  using State = m::BoardSupport::State;
  CHECK(h200->SupportAt(Version::Must("550.54.15")).state == State::kNotYet);
  CHECK(h200->SupportAt(Version::Must("550.90.07")).state == State::kListed);
  CHECK(h200->SupportAt(Version::Must("535.129.03")).state == State::kNotInBranch);
  CHECK(h200->SupportAt(Version::Must("610.43.02")).state == State::kUnknown);
  CHECK(h200->FirstListed()->str() == "550.90.07");
  CHECK(h200->SupportingBranches().rfind("R550 from 550.90.07, R555 from 555.58", 0) == 0);
}

// One test per beta series: a board first listed in a beta gets the first production release after it; no
// support value anywhere in the catalogue is a release of the series.
namespace {
void CheckBetaSeries(const std::string& prefix, const char* dev, const char* sv, const char* sd, int branch,
                     const std::string& want) {
  const m::Compat& c = m::EmbeddedCompat();
  for (const m::GpuModel& g : c.gpus)
    for (const auto& [b, first] : g.support) {
      INFO(g.name << " R" << b);
      CHECK_FALSE((first && first->str().rfind(prefix, 0) == 0));
    }
  CHECK(FirstIn(c, dev, sv, sd, branch) == want);
}
}  // namespace

TEST_CASE("a Vulkan beta never decides: 515.49.x", "[manifest]") {
  CheckBetaSeries("515.49.", "0x20b2", "0x10de", "0x1622", 515,
                  "515.65.07");  // README lists it from 515.49.18
}
TEST_CASE("a Vulkan beta never decides: 525.47.x", "[manifest]") {
  CheckBetaSeries("525.47.", "0x2330", "0x10de", "0x16c0", 525, "525.85.05");  // from 525.47.07
}
TEST_CASE("a Vulkan beta never decides: 535.43.x", "[manifest]") {
  CheckBetaSeries("535.43.", "0x26b9", "0x10de", "0x1851", 535, "535.104.05");  // L40S, from 535.43.09
}
TEST_CASE("a Vulkan beta never decides: 550.40.x", "[manifest]") {
  CheckBetaSeries("550.40.", "0x2335", "0x10de", "0x18be", 550, "550.90.07");  // H200, from 550.40.65
}
TEST_CASE("a Linux beta never decides: 550.40.07", "[manifest]") {
  CheckBetaSeries("550.40.07", "0x26b9", "0x10de", "0x1851", 550, "550.54.14");  // L40S, listed in 550.40.07
}
TEST_CASE("a Vulkan beta never decides: 570.123.x", "[manifest]") {
  CheckBetaSeries("570.123.", "0x2941", "0x10de", "0x2046", 570, "570.124.04");  // GB200, from 570.123.01
}
TEST_CASE("a Vulkan beta never decides: 580.94.x", "[manifest]") {
  CheckBetaSeries("580.94.", "0x2e12", "0x10de", "0x21ec", 580, "580.119.02");  // GB10, from 580.94.13
}
TEST_CASE("a Vulkan beta never decides: 595.44.x", "[manifest]") {
  // Every R595 tag of the data is a beta (595.44.x, 595.45.04): the branch has no data at all.
  CheckBetaSeries("595.", "0x2335", "0x10de", "0x18be", 595, "no data");
}

TEST_CASE("driver rules: flavour and ceilings per architecture or board", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  const m::GpuModel* v100 = c.GpuByPciId("0x1db5");
  CHECK_FALSE(v100->open_modules);
  CHECK(v100->last_driver_branch == 580);
  CHECK(v100->max_cuda_major == 12);
  const m::GpuModel* p100 = c.GpuByPciId("0x15f8");  // Tesla P100 PCIe 16GB
  REQUIRE(p100);
  CHECK(p100->arch == "pascal");
  CHECK(p100->cc.str() == "6.0");
  CHECK_FALSE(p100->open_modules);
  CHECK(p100->last_driver_branch == 580);
  CHECK(p100->max_cuda_major == 12);
  CHECK(p100->min_driver_branch == 367);
  REQUIRE(c.GpuByPciId("0x13f2"));  // Tesla M60
  CHECK(c.GpuByPciId("0x13f2")->arch == "maxwell");
  CHECK(c.GpuByPciId("0x13f2")->min_driver_branch == 0);  // CUDA 6.5 predates Table 3
  CHECK(c.GpuByPciId("0x1b38")->cc.str() == "6.1");       // Tesla P40
  const m::GpuModel* t10 = c.GpuByPciId("0x1e35");        // Tesla T10 is Turing (TU102)
  CHECK(t10->arch == "turing");
  CHECK(t10->open_modules);
  CHECK_FALSE(t10->last_driver_branch);
  CHECK(c.GpuByPciId("0x2342")->requires_open);  // GH200
  CHECK(c.GpuByPciId("0x2348")->requires_open);
  CHECK_FALSE(c.GpuByPciId("0x2335")->requires_open);                   // H200
  CHECK(c.GpuByPciId("0x2901")->requires_open);                         // Blackwell
  const m::GpuModel* d6000 = c.GpuByPci("0x2bb9", "0x10de", "0x2091");  // RTX 6000D
  REQUIRE(d6000);
  CHECK(d6000->name == "RTX 6000D");
  CHECK(d6000->arch == "blackwell");
  CHECK(p100->StackCannotRun(Version::Must("580.95.05"), false, 13) ==
        "CUDA 12.x is the last CUDA for Tesla P100 PCIe 16GB");
  CHECK(p100->StackCannotRun(Version::Must("590.48.01"), false, 12) ==
        "R580 is the last driver branch for Tesla P100 PCIe 16GB");
  CHECK(p100->StackCannotRun(Version::Must("580.95.05"), true, 12) ==
        "the open kernel modules do not drive Tesla P100 PCIe 16GB (pascal)");
  CHECK(p100->StackCannotRun(Version::Must("580.95.05"), false, 12).empty());
  CHECK(c.GpuByPciId("0x2342")->StackCannotRun(Version::Must("580.95.05"), false, 13) ==
        "GH200 120GB / 480GB runs only on NVIDIA's open kernel modules");
}

TEST_CASE("toolkit advisories up to CVE-2026-24260", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  REQUIRE(c.toolkit_advisories.size() == 6);
  CHECK(c.toolkit_advisories[4].cves == std::vector<std::string>{"CVE-2025-23266", "CVE-2025-23267"});
  CHECK(c.toolkit_advisories[4].fixed_in.str() == "1.17.8");
  CHECK(c.toolkit_advisories[5].cves == std::vector<std::string>{"CVE-2026-24260"});
  CHECK(c.toolkit_advisories[5].fixed_in.str() == "1.19.1");
}

TEST_CASE("broken compat documents", "[manifest]") {
  const std::string head = "apiVersion: gpuprep/v1\nkind: Compat\n";
  auto err = [](const std::string& text) { return ErrorOf([&] { m::ParseCompat(text, "compat.yaml"); }); };
  CHECK(err(head + "cuda_min_driver: [{cuda: \"12.2.2\", drivr: \"535.104.05\"}]\n") ==
        "2 compat.yaml:3:36: unknown key \"drivr\" (did you mean \"driver\"?)");
  CHECK(err(head + "cuda_min_driver: [{cuda: \"12.x\", driver: \"535.104.05\"}]\n") ==
        "2 compat.yaml:3:26: \"12.x\" is not a version");
  CHECK(err(head + "cuda_min_driver: []\nminor_compat: []\n") ==
        "2 compat.yaml:1:1: missing required key \"gpus\"");
  CHECK(err(head + "cuda_min_driver: []\nminor_compat: []\ngpus: []\nnvswitch_pci_ids: [\"22a3\"]\n") ==
        "2 compat.yaml:6:20: \"22a3\" is not a PCI device id (like \"0x2330\")");
  const std::string gpu =
      head +
      "cuda_min_driver: []\nminor_compat: []\ngpus:\n  - {name: A2, pci_ids: [\"0x25b6\"], "
      "arch: ampere, cc: \"8.6\", datacenter: true, min_cuda: \"11.1\", min_driver_branch: 455, ";
  CHECK(err(gpu + "subsystems: [\"10de157e\"]}\n") ==
        "2 compat.yaml:6:135: \"10de157e\" is not a PCI subsystem (like \"10de:16c0\")");
  CHECK(err(gpu + "support: {\"535\": \"535.x\"}}\n") == "2 compat.yaml:6:139: \"535.x\" is not a version");
  CHECK(err(gpu + "support: {\"535\": \"550.90.07\"}}\n") ==
        "2 compat.yaml:6:139: release 550.90.07 is not on branch 535");
  CHECK(err(gpu + "support: {\"R535\": none}}\n") ==
        "2 compat.yaml:6:132: \"R535\" is not a driver branch (like \"535\")");
  const std::string rules = head + "cuda_min_driver: []\nminor_compat: []\ngpus: []\ndriver_rules:\n";
  CHECK(err(rules + "  - {arch: pascall, modules: proprietary}\n") ==
        "2 compat.yaml:7:12: unknown architecture \"pascall\" (did you mean \"pascal\"?)");
  CHECK(err(rules + "  - {arch: volta, modules: closed}\n") ==
        "2 compat.yaml:7:28: modules must be open or proprietary, got \"closed\"");
  CHECK(err(rules + "  - {arch: volta, board: \"0x1db5\"}\n") ==
        "2 compat.yaml:7:5: a driver rule names either arch or board");
}

TEST_CASE("from CUDA 13.4: a driver branch per CUDA minor, and the third digit a build number",
          "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  REQUIRE(c.DriverBranchFor(Version::Must("13.4.2")));
  CHECK(c.DriverBranchFor(Version::Must("13.4.2"))->branch == 615);
  CHECK(c.DriverBranchFor(Version::Must("13.0.3"))->branch == 580);
  CHECK(c.DriverBranchFor(Version::Must("13.3"))->branch == 610);
  CHECK_FALSE(c.DriverBranchFor(Version::Must("13.5.0")));  // not in the material read: unknown, not guessed
  CHECK_FALSE(c.DriverBranchFor(Version::Must("12.9.1")));
  CHECK_FALSE(c.MinDriverFor(Version::Must("13.4.1")).has_value());  // no rows from 13.4 on
  CHECK(c.CudaReleaseName(Version::Must("13.4.0")) == "13.4 developer preview");
  CHECK(c.CudaReleaseName(Version::Must("13.4.1")) == "13.4 GA");
  CHECK(c.CudaReleaseName(Version::Must("13.4.2")) == "13.4 Update 1");
  CHECK(c.CudaReleaseName(Version::Must("13.2.2")) == "13.2 Update 2");
  CHECK(c.CudaReleaseName(Version::Must("12.2.0")) == "12.2 GA");
  CHECK(c.IsCudaPreview(Version::Must("13.4.0")));
  CHECK_FALSE(c.IsCudaPreview(Version::Must("13.4.1")));
  CHECK_FALSE(c.IsCudaPreview(Version::Must("13.0.0")));
}

TEST_CASE("driver branches: designation and end of life", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(c.IsLongTermSupport(580));
  CHECK(c.IsLongTermSupport(620));
  CHECK(c.IsLongTermSupport(535));
  CHECK_FALSE(c.IsLongTermSupport(595));
  CHECK_FALSE(c.IsLongTermSupport(610));
  CHECK_FALSE(c.IsLongTermSupport(590));  // not listed: not long-term support
  CHECK(c.BranchInfo(580)->end_of_life == "2028-06");
  CHECK(c.BranchInfo(620)->end_of_life == "2029-09");
  CHECK(c.BranchInfo(595)->designation == "production");
  const std::string head =
      "apiVersion: gpuprep/v1\nkind: Compat\ncuda_min_driver: []\nminor_compat: []\ngpus: []\n";
  auto err = [](const std::string& text) { return ErrorOf([&] { m::ParseCompat(text, "compat.yaml"); }); };
  CHECK(err(head + "driver_branches: [{branch: 580, designation: lts}]\n") ==
        "2 compat.yaml:6:46: unknown designation \"lts\" (expected one of: long-term-support, production, "
        "new-feature)");
  CHECK(err(head + "driver_branches: [{branch: 580, designation: production, end_of_life: 2028}]\n") ==
        "2 compat.yaml:6:71: end_of_life is a month (like \"2028-06\"), got \"2028\"");
  CHECK(err(head + "cuda_driver_branches: [{cuda: \"13.4.1\", branch: 615}]\n") ==
        "2 compat.yaml:6:31: cuda is a CUDA minor (like \"13.4\"), got \"13.4.1\"");
  CHECK(err(head + "cuda_driver_branches: [{cuda: \"13.4\", branch: 615, ga: \"13.5.1\"}]\n") ==
        "2 compat.yaml:6:56: ga is a release of CUDA 13.4 (like \"13.4.1\"), got \"13.5.1\"");
}

// One host's facts decode only the catalogue rows it asks for, and each decodes as in the whole catalogue.
TEST_CASE("EmbeddedHostCompat: rows by PCI id on demand, equal to the whole catalogue's", "[manifest]") {
  const m::Compat& all = m::EmbeddedCompat();
  const m::Compat& host = m::EmbeddedHostCompat();
  CHECK(host.gpus.empty());
  REQUIRE(host.gpu_rows != nullptr);
  CHECK(host.driver_rules.size() == all.driver_rules.size());
  CHECK(host.library_builds.size() == all.library_builds.size());
  CHECK(host.nvswitch_pci_ids == all.nvswitch_pci_ids);
  CHECK(host.cuda_min_driver.size() == all.cuda_min_driver.size());
  size_t asked = 0;
  for (const m::GpuModel& g : all.gpus) {
    for (const std::string& id : g.pci_ids) {
      std::vector<std::pair<std::string, std::string>> subs = {{"", ""}, {"0x10de", "0xffff"}};
      for (const std::string& s : g.subsystems) subs.push_back({"0x" + s.substr(0, 4), "0x" + s.substr(5)});
      for (const auto& [vendor, device] : subs) {
        const m::GpuModel* want = all.GpuByPci(id, vendor, device);
        const m::GpuModel* got = host.GpuByPci(id, vendor, device);
        ++asked;
        REQUIRE((want == nullptr) == (got == nullptr));
        if (!want) continue;
        INFO(id << " " << vendor << ":" << device);
        CHECK(got->name == want->name);
        CHECK(got->subsystems == want->subsystems);
        CHECK(got->support == want->support);
        CHECK(got->cc == want->cc);
        CHECK(got->min_driver_branch == want->min_driver_branch);
        CHECK(got->last_driver_branch == want->last_driver_branch);
        CHECK(got->max_cuda_major == want->max_cuda_major);
        CHECK(got->open_modules == want->open_modules);
        CHECK(got->requires_open == want->requires_open);
        CHECK(got->memory_mib == want->memory_mib);
        CHECK(got->nvlink_links == want->nvlink_links);
        CHECK(host.GpuByPci(id, vendor, device) == got);  // decoded once, kept
      }
    }
  }
  CHECK(asked > all.gpus.size());
  CHECK(host.GpuByPciId("0x0001") == nullptr);
  REQUIRE(host.GpuByPciId("0X2330") != nullptr);  // any case, as sysfs and users write it
  CHECK(host.GpuByPciId("0X2330")->name == all.GpuByPciId("0x2330")->name);
}
