// The fabricmanager layer on HGX Blackwell and Grace Blackwell hosts: the facts come from the fixture trees
// (tests/fixtures/hosts/hgx-b200, hgx-b200-nonroot, gb200-tray) probed as doctor --root probes them, the
// stack is the embedded Blackwell stack; each test breaks one piece (Fabric Manager, NVLSM, ib_umad, the
// fabric state) and expects its finding, its stable code and its fix.
#include <catch2/catch.hpp>

#include "layers/check.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "sys/fs.h"

using namespace gp;
using layers::LayerReport;
using layers::Status;

namespace {

probe::HostFacts Fixture(const std::string& name) {
  sys::DiskFs fs(std::string(GP_FIXTURES) + "/hosts/" + name);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  return probe::ProbeHost(env);
}

const manifest::Stack& Blackwell() {
  static const manifest::Stack s = manifest::LoadStack("blackwell-r580-cuda13.0", manifest::LoadContext{});
  return s;
}

LayerReport Check(const probe::HostFacts& h, const manifest::Stack& s = Blackwell()) {
  layers::CheckInput in{s, manifest::EmbeddedCompat(), h, "2026-12-01", ""};
  return layers::CheckFabricManager(in);
}

const layers::Finding* Code(const LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

std::string Codes(const LayerReport& r) {
  std::string out;
  for (const auto& f : r.findings) out += f.code + "=" + layers::StatusName(f.status) + " ";
  return out;
}

}  // namespace

TEST_CASE("fabricmanager on hgx-b200: everything present", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  LayerReport r = Check(h);
  INFO(Codes(r) << r.detail);
  CHECK(r.status == Status::kOk);
  CHECK(Code(r, "fabricmanager.hgx-blackwell"));
  CHECK(Code(r, "fabricmanager.match"));
  CHECK(Code(r, "fabricmanager.nvlsm-present"));  // the stack does not pin NVLSM yet
  CHECK(Code(r, "fabricmanager.ib-umad"));
  CHECK(Code(r, "fabricmanager.fabric-state-unknown")->status == Status::kSkip);  // no NVML under --root
  CHECK_FALSE(Code(r, "fabricmanager.not-needed"));
  CHECK(r.detail.find("no NVSwitch") == std::string::npos);
  CHECK(r.found == std::optional<std::string>("580.95.05"));
  // The layer is shown (doctor's rows) although no NVSwitch is a PCI device.
  CHECK(h.nvswitch_count == 0);
  CHECK(layers::kFabricManagerLayer.shown(h));
}

TEST_CASE("fabricmanager on hgx-b200: Fabric Manager missing", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  h.packages.erase("nvidia-fabricmanager-580");
  h.fabricmanager = {};
  LayerReport r = Check(h);
  INFO(Codes(r));
  CHECK(r.status == Status::kFail);
  const auto* f = Code(r, "fabricmanager.missing");
  REQUIRE(f);
  CHECK(f->message.find("HGX Blackwell but no fabric manager") != std::string::npos);
  CHECK(f->fix.value_or("").find("sudo apt-get install nvidia-fabricmanager-580") == 0);
  CHECK(f->fix.value_or("").find("580.95.05") != std::string::npos);
}

TEST_CASE("fabricmanager on hgx-b200: Fabric Manager at another version, or not enabled",
          "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  h.fabricmanager.version = "580.82.07";
  h.fabricmanager.enabled = false;
  LayerReport r = Check(h);
  INFO(Codes(r));
  CHECK(Code(r, "fabricmanager.version-mismatch")->status == Status::kFail);
  CHECK(Code(r, "fabricmanager.not-running")->fix ==
        std::optional<std::string>("sudo systemctl enable --now nvidia-fabricmanager"));
  // Nothing starts NVLSM either, then.
  CHECK(Code(r, "fabricmanager.nvlsm-not-enabled")->status == Status::kFail);
}

TEST_CASE("fabricmanager on hgx-b200: NVLSM missing, or not at the stack's pin", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  h.packages.erase("nvlsm");
  h.fabric.nvlsm = {};
  LayerReport r = Check(h);
  INFO(Codes(r));
  CHECK(r.status == Status::kFail);
  const auto* f = Code(r, "fabricmanager.nvlsm-missing");
  REQUIRE(f);
  CHECK(f->fix.value_or("").find("sudo apt-get install nvlsm") == 0);

  // A stack that pins NVLSM (where the pin lives: the driver's fabric manager packages).
  manifest::Stack pinned = Blackwell();
  pinned.driver.fabricmanager_packages.push_back({"nvlsm", "2025.06.11-1", ""});
  probe::HostFacts ok = Fixture("hgx-b200");
  LayerReport p = Check(ok, pinned);
  INFO(Codes(p));
  const auto* mm = Code(p, "fabricmanager.nvlsm-version-mismatch");
  REQUIRE(mm);
  CHECK(mm->message == "NVLSM 2025.06.10 != the stack's 2025.06.11");
  CHECK(mm->fix == std::optional<std::string>("sudo apt-get install nvlsm=2025.06.11-1"));
  CHECK(p.wanted.find("nvlsm 2025.06.11") != std::string::npos);
  pinned.driver.fabricmanager_packages.back() = {"nvlsm", "", "2025.06.10"};
  CHECK(Code(Check(ok, pinned), "fabricmanager.nvlsm-match"));
}

TEST_CASE("fabricmanager on hgx-b200: ib_umad missing from the running kernel", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  h.fabric.ib_umad_available = false;
  h.fabric.ib_umad_loaded = false;
  h.fabric.ib_umad_detail.clear();
  LayerReport r = Check(h);
  INFO(Codes(r));
  const auto* f = Code(r, "fabricmanager.ib-umad-missing");
  REQUIRE(f);
  CHECK(f->status == Status::kFail);
  CHECK(f->fix == std::optional<std::string>(
                      "sudo apt-get install linux-modules-extra-6.8.0-60-generic && sudo modprobe ib_umad"));
  // A kernel release that is no package name is not written into the command.
  h.kernel = "6.8.0;rm -rf /";
  CHECK(Code(Check(h), "fabricmanager.ib-umad-missing")->fix ==
        std::optional<std::string>(
            "sudo apt-get install linux-modules-extra-$(uname -r) && sudo modprobe ib_umad"));
}

TEST_CASE("fabricmanager on hgx-b200: NVML's fabric state is the ground truth", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  for (auto& g : h.gpus) {
    g.fabric_state = "completed";
    g.fabric_status = 0;
  }
  CHECK(Code(Check(h), "fabricmanager.fabric-completed"));
  h.gpus[3].fabric_state = "in-progress";
  h.gpus[3].fabric_status.reset();
  LayerReport r = Check(h);
  const auto* f = Code(r, "fabricmanager.fabric-not-completed");
  REQUIRE(f);
  CHECK(f->message.find("GPU 0000:5d:00.0: NVLink fabric state in-progress") == 0);
  CHECK(r.status == Status::kFail);
  h.gpus[3].fabric_state = "completed";
  h.gpus[3].fabric_status = 22;
  CHECK(Code(Check(h), "fabricmanager.fabric-error"));
}

TEST_CASE("fabricmanager on the live host: enabled but not active", "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200");
  h.live = true;
  LayerReport r = Check(h);
  INFO(Codes(r));
  CHECK(Code(r, "fabricmanager.not-active"));
  CHECK(Code(r, "fabricmanager.nvlsm-not-active"));
  h.fabricmanager.running = true;
  h.fabric.nvlsm.running = true;
  r = Check(h);
  CHECK_FALSE(Code(r, "fabricmanager.not-active"));
  CHECK_FALSE(Code(r, "fabricmanager.nvlsm-not-active"));
}

TEST_CASE("fabricmanager on hgx-b200-nonroot: decided from the board, the same verdicts",
          "[layers][fabric]") {
  probe::HostFacts h = Fixture("hgx-b200-nonroot");
  LayerReport r = Check(h);
  INFO(Codes(r) << r.detail);
  CHECK(r.status == Status::kOk);
  CHECK_FALSE(Code(r, "fabricmanager.hgx-blackwell"));
  const auto* f = Code(r, "fabricmanager.vpd-not-read");
  REQUIRE(f);
  CHECK(f->status == Status::kSkip);
  CHECK(f->message.find("from the board: the ConnectX-7 VPD was not read") != std::string::npos);
  CHECK(Code(r, "fabricmanager.nvlsm-present"));
}

TEST_CASE("fabricmanager on gb200-tray: not applicable, IMEX out of scope", "[layers][fabric]") {
  probe::HostFacts h = Fixture("gb200-tray");
  CHECK(layers::kFabricManagerLayer.shown(h));
  LayerReport r = Check(h);
  CHECK(r.status == Status::kSkip);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].code == "fabricmanager.not-applicable");
  CHECK(r.findings[0].message.find("IMEX") != std::string::npos);
  CHECK(r.findings[0].message.find("out of gpuprep's scope") != std::string::npos);
}

TEST_CASE("fabricmanager: ordinary ConnectX-7 hosts keep their verdicts", "[layers][fabric]") {
  probe::HostFacts h = Fixture("open-module");
  CHECK_FALSE(layers::kFabricManagerLayer.shown(h));
  CHECK(Check(h).findings[0].code == "fabricmanager.not-needed");
  probe::HostFacts sw = Fixture("nvswitch-no-fm");
  CHECK(layers::kFabricManagerLayer.shown(sw));
  CHECK(Check(sw).findings[0].message ==
        "4 NVSwitches but no fabric manager: CUDA finds no usable GPU until it runs");
}
