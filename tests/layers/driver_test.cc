// Driver-layer verdicts and the driver-vs-CUDA rule, each with its fix word for word.
#include <catch2/catch.hpp>

#include "layers/rules.h"
#include "layers/sample.h"

using namespace gp;
using layers::Status;

namespace {
layers::LayerReport Driver(const test::Inputs& t) { return layers::CheckDriver(t.in()); }
}  // namespace

TEST_CASE("driver: a healthy host is ok and says why", "[layers][doctor]") {
  test::Inputs t;
  auto r = Driver(t);
  CHECK(r.status == Status::kOk);
  CHECK(r.found == std::optional<std::string>("535.129.03"));
  CHECK(r.wanted == ">= 535.129.03");
  CHECK(r.detail ==
        "kernel module and userspace driver agree; driver 535.129.03 runs the stack's CUDA 12.2.2 "
        "(needs >= 535.104.05)");
  CHECK_FALSE(r.fix.has_value());
}

TEST_CASE("driver: nouveau bound", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver = {};
  t.host.driver.kernel_headers = true;
  for (auto& g : t.host.gpus) g.driver = "nouveau";
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].message ==
        "nouveau (the open-source driver) is bound to the GPUs: the NVIDIA driver cannot load");
  CHECK(r.findings[0].fix ==
        std::optional<std::string>(
            "sudo gpuprep apply --yes --only driver (or: printf 'blacklist nouveau\\noptions nouveau "
            "modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo "
            "update-initramfs -u && sudo reboot)"));
  CHECK(r.findings[1].message == "NVIDIA driver not installed");
  CHECK(r.findings[1].fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  t.host.driver.nouveau_loaded = true;
  t.host.driver.nouveau_blacklisted = true;
  auto b = Driver(t);
  CHECK(b.findings[0].message ==
        "nouveau is blacklisted but still bound to the GPUs (the initramfs predates the blacklist)");
  CHECK(b.findings[0].fix == std::optional<std::string>("sudo update-initramfs -u && sudo reboot"));
}

TEST_CASE("driver: missing, and no GPU at all", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver = {};
  t.host.driver.kernel_headers = true;
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  CHECK_FALSE(r.found.has_value());
  CHECK(r.detail == "NVIDIA driver not installed");
  CHECK(r.fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  t.host.gpus.clear();
  t.host.driver.kernel_headers = false;  // not worth a warning without a GPU
  auto none = Driver(t);
  CHECK(none.status == Status::kSkip);
  CHECK(none.detail == "no NVIDIA GPU and no NVIDIA driver");
}

TEST_CASE("driver: kernel module != userspace driver -> reboot", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.version = "535.104.05";
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  CHECK(r.found == std::optional<std::string>("535.104.05"));
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message ==
        "kernel module 535.104.05 != userspace driver 535.129.03 (\"Failed to initialize NVML: "
        "Driver/library version mismatch\")");
  CHECK(f->fix == std::optional<std::string>("sudo reboot"));

  // NVML's own error says so even when the file names agree.
  test::Inputs n;
  n.host.driver.nvml_error = "Driver/library version mismatch";
  CHECK(test::FindingWith(Driver(n), Status::kFail)->fix == std::optional<std::string>("sudo reboot"));
}

TEST_CASE("driver: module not loaded", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module = {};
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  CHECK(r.findings[0].message ==
        "userspace driver 535.129.03 is installed but the kernel module is not loaded");
  CHECK(r.findings[0].fix == std::optional<std::string>("sudo modprobe nvidia (or sudo reboot)"));
}

TEST_CASE("driver: branch too old for Blackwell (from the catalogue, not hard-coded)", "[layers][doctor]") {
  test::Inputs t;
  for (auto& g : t.host.gpus) g.device_id = "0x2901";
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "driver branch 535 does not support B200 (needs R570 or later)");
  CHECK(f->fix ==
        std::optional<std::string>("choose a stack with driver branch 570 or later: gpuprep manifest list"));

  // A stack on a new enough branch fixes it by applying; B300's own minimum comes from its catalogue row.
  t.stack.driver.branch = 580;
  t.stack.driver.version.version = Version::Must("580.95.05");
  for (auto& g : t.host.gpus) g.device_id = "0x3182";
  auto b300 = Driver(t);
  f = test::FindingWith(b300, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "driver branch 535 does not support B300 (needs R575 or later)");
  CHECK(f->fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));
}

TEST_CASE("driver: branch past a GPU's last (V100 after R580)", "[layers][doctor]") {
  test::Inputs t;
  for (auto& g : t.host.gpus) g.device_id = "0x1db5";
  t.host.driver.module.version = t.host.driver.userspace_version = "590.44.01";
  auto r = Driver(t);
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "driver branch 590 no longer supports V100 (its last branch is R580)");
  CHECK(f->fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));
  t.stack.driver.branch = 590;
  CHECK(test::FindingWith(Driver(t), Status::kFail)->fix ==
        std::optional<std::string>("choose a stack with driver branch 580 or older: gpuprep manifest list"));
}

TEST_CASE("driver: below the stack's CUDA minimum", "[layers][doctor]") {
  test::Inputs t;
  t.stack.driver.version.version = Version::Must("530.30.02");
  t.host.driver.module.version = t.host.driver.userspace_version = "530.30.02";
  auto warn = Driver(t);
  CHECK(warn.status == Status::kWarn);
  CHECK(test::FindingWith(warn, Status::kWarn)->message ==
        "driver 530.30.02 is below the stack's CUDA 12.2.2's minimum 535.104.05: it runs under CUDA 12.x "
        "minor-version compatibility, without features that need a newer driver");
  CHECK(warn.fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  t.stack.cuda.version.version = Version::Must("13.0.0");
  auto fail = Driver(t);
  CHECK(fail.status == Status::kFail);
  CHECK(test::FindingWith(fail, Status::kFail)->message ==
        "driver 530.30.02 is too old for the stack's CUDA 13.0.0 (needs >= 580.65.06)");
}

TEST_CASE("driver: Secure Boot with an unsigned DKMS module", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.secure_boot = true;
  t.host.driver.module = {};
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  REQUIRE(r.findings.size() >= 1);
  CHECK(r.findings[0].message ==
        "Secure Boot is on and the DKMS-built nvidia module is not signed with an "
        "enrolled key: the kernel refuses to load it");
  CHECK(r.findings[0].fix ==
        std::optional<std::string>(
            "sudo update-secureboot-policy --new-key && sudo update-secureboot-policy "
            "--enroll-key && sudo reboot (enroll the key in MokManager), or turn Secure Boot off"));
  // The "module not loaded" finding would only repeat the cause.
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[1].status == Status::kOk);  // the driver still runs the stack's CUDA once loaded
  t.host.os.id = "debian";
  CHECK(Driver(t).findings[0].fix ==
        std::optional<std::string>(
            "sudo dkms generate_mok && sudo mokutil --import /var/lib/dkms/mok.pub && sudo "
            "reboot (enroll the key in MokManager), or turn Secure Boot off"));
  t.host.driver.dkms_signed = true;
  CHECK(Driver(t).status == Status::kFail);  // still not loaded
  CHECK(Driver(t).findings[0].message ==
        "userspace driver 535.129.03 is installed but the kernel module is not loaded");
}

TEST_CASE("driver: no kernel headers, packages not held", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.kernel_headers = false;
  t.host.packages["nvidia-driver-535"].held = false;
  auto r = Driver(t);
  CHECK(r.status == Status::kWarn);
  CHECK(r.fix == std::optional<std::string>("sudo apt-get install linux-headers-5.15.0-105-generic; "
                                            "sudo apt-mark hold nvidia-driver-535"));
  CHECK(
      r.detail.find("no kernel headers for 5.15.0-105-generic: DKMS cannot build the nvidia module for it") !=
      std::string::npos);
  CHECK(r.detail.find(
            "driver packages not held (nvidia-driver-535): an upgrade can replace the userspace driver "
            "under the loaded kernel module") != std::string::npos);
  // Prebuilt signed modules need no headers.
  t.stack.driver.signed_modules = true;
  t.host.driver.dkms_module = false;
  CHECK(layers::CheckDriver(t.in()).fix ==
        std::optional<std::string>("sudo apt-mark hold nvidia-driver-535"));
}

TEST_CASE("driver: an unknown stack driver version skips the layer with the reason", "[layers][doctor]") {
  test::Inputs t;
  t.stack.driver.version = {};
  t.stack.driver.version.unknown = true;
  t.stack.driver.version.reason = "no verified version in NVIDIA's notes";
  auto r = Driver(t);
  CHECK(r.status == Status::kSkip);
  CHECK(r.detail == "the stack's driver version is unknown: no verified version in NVIDIA's notes");
}

TEST_CASE("DriverRunsCuda: ok at the release's minimum, warn under MVC or forward compat, else fail",
          "[layers][doctor]") {
  auto c = test::SampleCompat();
  auto V = [](const char* s) { return Version::Must(s); };
  auto run = [&](const char* d, const char* cuda, bool dc = false, std::vector<Version> fc = {}) {
    return layers::DriverRunsCuda(c, V(d), V(cuda), std::string("CUDA ") + cuda, dc, fc);
  };
  CHECK(run("535.104.05", "12.2.2").status == Status::kOk);
  CHECK(run("590.44.01", "12.2.2").status == Status::kOk);  // newer drivers run older CUDA
  CHECK(run("535.54.03", "12.2.0").status == Status::kOk);
  CHECK(run("535.54.03", "12.2.2").status == Status::kWarn);
  CHECK(run("525.60.13", "12.2.2").status == Status::kWarn);  // exact_min of CUDA 12 MVC
  auto below_exact = run("525.60.11", "12.2.2");
  CHECK(below_exact.status == Status::kFail);
  CHECK(below_exact.message == "driver 525.60.11 is too old for CUDA 12.2.2 (needs >= 535.104.05)");
  CHECK(run("575.51.03", "13.0.0").status == Status::kFail);
  // A host CUDA given as a component build (nvcc 13.0.88) is judged as its release's GA.
  CHECK(run("580.65.06", "13.0.88").status == Status::kOk);
  CHECK(run("580.65.06", "13.0.2").status == Status::kWarn);
  // Forward compatibility: only on data-center GPUs and only for a listed branch at or above the listed
  // version.
  auto fc = std::vector<Version>{V("470.57"), V("535.86")};
  auto forward = run("470.57.02", "12.5.0.23", true, fc);
  CHECK(forward.status == Status::kWarn);
  CHECK(forward.message ==
        "no minimum driver is known for CUDA 12.5.0.23: it runs on these data-center GPUs only in "
        "CUDA forward-compatibility mode");
  CHECK(run("470.57.02", "12.5.0.23", false, fc).status != Status::kWarn);
  CHECK(run("470.42.01", "12.4.0", true, fc).status == Status::kFail);
  CHECK(run("470.57.02", "12.4.0", true, fc).status == Status::kWarn);
  // No row for the release: the major's minor-version compatibility decides.
  CHECK(run("470.57.02", "12.7", false).status == Status::kFail);
  CHECK(run("470.57.02", "12.7", false).message ==
        "driver 470.57.02 is too old for CUDA 12.7 (needs >= 525.60.13)");
  CHECK(run("580.65.06", "13.4", false).status == Status::kWarn);
  CHECK(run("575.51.03", "13.4", false).message ==
        "driver 575.51.03 is too old for CUDA 13.4 (needs >= R580)");
  // Nothing known about the major at all.
  CHECK(run("999.1", "14.0", false).message ==
        "no minimum driver is known for CUDA 14.0: gpuprep cannot tell whether driver 999.1 runs it");
}

TEST_CASE("driver: persistence daemon on data-center GPUs", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.persistenced_enabled = false;
  auto r = Driver(t);
  CHECK(r.status == Status::kWarn);
  CHECK(test::FindingWith(r, Status::kWarn)->message ==
        "nvidia-persistenced is not enabled: GPU state is torn down between jobs");
  CHECK(r.fix == std::optional<std::string>("sudo systemctl enable --now nvidia-persistenced"));
  for (auto& g : t.host.gpus) g.device_id = "0x2684";  // GeForce: not asked for
  CHECK(Driver(t).status == Status::kOk);
}

TEST_CASE("driver: the open kernel modules' own minimum per board", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.open = true;  // the loaded module decides the flavour
  t.host.driver.module.version = t.host.driver.userspace_version = "520.61.05";
  t.stack.driver.flavour = "open";
  t.stack.driver.branch = 580;
  t.stack.driver.version.version = Version::Must("580.95.05");
  auto r = Driver(t);
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  // R520 is enough for an H100 in general (its CUDA 11.8 minimum), not for the open modules.
  CHECK(f->message ==
        "open kernel modules 520.61.05 do not support H100 SXM5 80GB (the open modules list it from 525.47.07)");
  CHECK(f->fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  auto open_finding = [](const layers::LayerReport& rep) {
    for (const auto& finding : rep.findings)
      if (finding.message.rfind("open kernel modules 520.61.05 do not support", 0) == 0) return true;
    return false;
  };
  // The proprietary module of the same version is fine: the open minimum applies to the open flavour only.
  t.host.driver.module.open = false;
  CHECK_FALSE(open_finding(Driver(t)));

  // Without a loaded module the stack's flavour decides.
  t.host.driver.module.loaded = false;
  CHECK(open_finding(Driver(t)));
  t.stack.driver.flavour = "server-open";
  CHECK(open_finding(Driver(t)));
  t.stack.driver.flavour = "proprietary";
  CHECK_FALSE(open_finding(Driver(t)));
}

TEST_CASE("driver: the board's subsystem picks the open minimum (A30 10de:1852 from 525.147.05)",
          "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.open = true;
  t.host.driver.module.version = t.host.driver.userspace_version = "525.60.13";
  for (auto& g : t.host.gpus) {
    g.device_id = "0x20b7";
    g.subsystem_vendor_id = "0x10de";
    g.subsystem_device_id = "0x1852";
  }
  auto r = Driver(t);
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "open kernel modules 525.60.13 do not support A30 (the open modules list it from 525.147.05)");
  CHECK(f->fix == std::optional<std::string>("choose a stack with driver 525.147.05 or later: gpuprep manifest list"));
  // Another A30 board (or one whose subsystem is unknown) was listed from 515.48.07.
  for (auto& g : t.host.gpus) g.subsystem_device_id = "0x1532";
  CHECK_FALSE(test::FindingWith(Driver(t), Status::kFail));
  for (auto& g : t.host.gpus) g.subsystem_vendor_id = g.subsystem_device_id = "";
  CHECK_FALSE(test::FindingWith(Driver(t), Status::kFail));
}

TEST_CASE("driver: the open kernel modules do not drive Volta", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.open = true;
  t.host.driver.module.version = t.host.driver.userspace_version = "580.95.05";
  for (auto& g : t.host.gpus) g.device_id = "0x1db5";
  auto r = Driver(t);
  const layers::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "the open kernel modules do not support V100 (volta; they support Turing and later)");
  CHECK(f->fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));  // the stack is proprietary
  t.stack.driver.flavour = "open";
  CHECK(test::FindingWith(Driver(t), Status::kFail)->fix ==
        std::optional<std::string>("choose a stack with the proprietary driver flavour: gpuprep manifest list"));
}
