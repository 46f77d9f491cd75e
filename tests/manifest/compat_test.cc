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
  CHECK(c.MinDriverFor(Version::Must("13.1.0"))->str() == "590.44.01");
  CHECK(c.MinDriverFor(Version::Must("12.8"))->str() == "570.26");
  CHECK(c.MinDriverFor(Version::Must("12.5.0.23"))->str() == "555.42.02");
  CHECK(c.MinDriverFor(Version::Must("11.0.1"))->str() == "450.36.06");
  CHECK_FALSE(c.MinDriverFor(Version::Must("12.7")).has_value());  // NVIDIA never shipped 12.7
  CHECK_FALSE(c.MinDriverFor(Version::Must("10.2")).has_value());
}

TEST_CASE("Table 3 is complete and ordered newest first", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  CHECK(c.cuda_min_driver.size() == 55);  // 53 rows of Table 3 + two secondary 13.3 rows
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
  CHECK(h100->name == "H100 SXM5 80GB");
  CHECK(h100->arch == "hopper");
  CHECK(h100->cc.str() == "9.0");
  CHECK(h100->datacenter);
  CHECK(c.GpuByPciId("0X2330") == h100);
  CHECK(c.GpuByPciId("2330") == h100);
  CHECK(c.GpuByPciId("0x2901")->min_driver_branch == 570);  // B200
  CHECK(c.GpuByPciId("0x3182")->min_driver_branch == 575);  // B300
  const m::GpuModel* v100 = c.GpuByPciId("0x1db5");
  REQUIRE(v100);
  CHECK(v100->last_driver_branch == 580);
  CHECK(v100->max_cuda_major == 12);
  CHECK_FALSE(c.GpuByPciId("0x2684")->datacenter);  // RTX 4090
  CHECK(c.GpuByPciId("0x9999") == nullptr);
  CHECK(c.IsNvSwitch("0x22a3"));
  CHECK(c.IsNvSwitch("0x1AF1"));
  CHECK_FALSE(c.IsNvSwitch("0x2330"));
  const m::ImageFacts* img = c.ImageByRef("nvcr.io/nvidia/pytorch:23.08-py3");
  REQUIRE(img);
  CHECK(img->cuda.version->str() == "12.2.1");
  CHECK(img->driver_min_branch == 535);
  const m::ImageFacts* i2512 = c.ImageByRef("nvcr.io/nvidia/pytorch:25.12-py3");
  REQUIRE(i2512);
  CHECK(i2512->cuda.version->str() == "13.1.0");
  CHECK(i2512->cudnn.unknown);
  CHECK(c.ImageByRef("nvcr.io/nvidia/pytorch:23.10-py3") == nullptr);
  CHECK(c.toolkit_advisories.size() == 4);
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
}
