// Driver-layer verdicts and the driver-vs-CUDA rule, each with its fix word for word.
#include <catch2/catch.hpp>

#include "layers/sample.h"
#include "verdict/rules.h"

using namespace gp;
using verdict::Status;

namespace {
verdict::LayerReport Driver(const test::Inputs& t) { return layers::CheckDriver(t.in()); }
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
  const verdict::Finding* f = test::FindingWith(r, Status::kFail);
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

namespace {
const verdict::Finding* FindingStarting(const verdict::LayerReport& r, const std::string& prefix) {
  for (const auto& f : r.findings)
    if (f.message.rfind(prefix, 0) == 0) return &f;
  return nullptr;
}
}  // namespace

TEST_CASE("driver: branch too old for Blackwell (from the catalogue, not hard-coded)", "[layers][doctor]") {
  test::Inputs t;
  for (auto& g : t.host.gpus) g.device_id = "0x2901";
  auto r = Driver(t);
  CHECK(r.status == Status::kFail);
  const verdict::Finding* f = FindingStarting(r, "driver branch 535");
  REQUIRE(f);
  CHECK(f->status == Status::kFail);
  CHECK(f->message == "driver branch 535 does not support B200 (needs R570 or later)");
  CHECK(f->fix ==
        std::optional<std::string>("choose a stack with driver branch 570 or later: gpuprep manifest list"));
  // Blackwell runs only on the open modules (driver_rules): the loaded proprietary module fails too.
  f = FindingStarting(r, "B200 runs only");
  REQUIRE(f);
  CHECK(f->message == "B200 runs only on NVIDIA's open kernel modules; the loaded module is proprietary");
  CHECK(f->fix ==
        std::optional<std::string>("choose a stack with the open driver flavour: gpuprep manifest list"));

  // With a stack on a new enough branch, applying it is the fix.
  t.stack.driver.branch = 580;
  CHECK(FindingStarting(Driver(t), "driver branch 535")->fix ==
        std::optional<std::string>("sudo gpuprep apply --yes --only driver"));
}

TEST_CASE("driver: a release that does not list the board warns, naming the first that does",
          "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.version = t.host.driver.userspace_version = "525.53";  // a beta, older than 525.60.11
  t.stack.driver.branch = 535;
  auto r = Driver(t);
  const verdict::Finding* f = FindingStarting(r, "driver 525.53 predates");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  CHECK(f->message ==
        "driver 525.53 predates 525.60.11, the first R525 release (betas aside) whose supported-GPU list "
        "names H100 SXM5 80GB");
  // The stack's 535.129.03 lists it: applying the stack fixes it.
  CHECK(f->fix == std::optional<std::string>("sudo gpuprep apply --yes --only driver"));

  // A branch that skips the board names the branches that list it, for either flavour.
  t.host.driver.module.version = t.host.driver.userspace_version = "545.29.06";
  auto r545 = Driver(t);
  f = FindingStarting(r545, "no R545 release");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  CHECK(f->message ==
        "no R545 release (betas aside) lists H100 SXM5 80GB; the branches that do: R525 from 525.60.11, "
        "R535 from 535.54.03");
  t.host.driver.module.open = true;
  CHECK(FindingStarting(Driver(t), "no R545 release"));

  // Listed releases and branches without data say nothing.
  t.host.driver.module.version = t.host.driver.userspace_version = "535.54.03";
  CHECK_FALSE(FindingStarting(Driver(t), "driver 535.54.03 predates"));
  t.host.driver.module.version = t.host.driver.userspace_version = "580.95.05";
  CHECK_FALSE(FindingStarting(Driver(t), "no R580"));
}

TEST_CASE("driver: the board's subsystem picks its own support (A30 10de:1852 from 535.129.03)",
          "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.version = t.host.driver.userspace_version = "535.104.05";
  for (auto& g : t.host.gpus) {
    g.device_id = "0x20b7";
    g.subsystem_vendor_id = "0x10de";
    g.subsystem_device_id = "0x1852";
  }
  auto r = Driver(t);
  const verdict::Finding* f = FindingStarting(r, "driver 535.104.05 predates 535.129.03");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  // Another A30 board (or one whose subsystem is unknown) was listed from 535.54.03.
  for (auto& g : t.host.gpus) g.subsystem_device_id = "0x1532";
  CHECK_FALSE(FindingStarting(Driver(t), "driver 535.104.05 predates"));
  for (auto& g : t.host.gpus) g.subsystem_vendor_id = g.subsystem_device_id = "";
  CHECK_FALSE(FindingStarting(Driver(t), "driver 535.104.05 predates"));
}

TEST_CASE("driver: the open kernel modules do not drive Volta", "[layers][doctor]") {
  test::Inputs t;
  t.host.driver.module.open = true;
  t.host.driver.module.version = t.host.driver.userspace_version = "580.95.05";
  for (auto& g : t.host.gpus) g.device_id = "0x1db5";
  auto r = Driver(t);
  const verdict::Finding* f = test::FindingWith(r, Status::kFail);
  REQUIRE(f);
  CHECK(f->message == "the open kernel modules do not support V100 (volta; they support Turing and later)");
  CHECK(f->fix ==
        std::optional<std::string>("sudo gpuprep apply --yes --only driver"));  // the stack is proprietary
  t.stack.driver.flavour = "open";
  CHECK(test::FindingWith(Driver(t), Status::kFail)->fix ==
        std::optional<std::string>(
            "choose a stack with the proprietary driver flavour: gpuprep manifest list"));
}

namespace {
const verdict::Finding* FindCode(const verdict::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}
}  // namespace

TEST_CASE("driver: NVIDIA's version-locking package is reported with its branch; another branch warns",
          "[layers][doctor]") {
  test::Inputs t;
  // An R535 stack with no locking package installed: nothing to report (the stack's packages carry the
  // branch in their names).
  CHECK_FALSE(FindCode(Driver(t), "driver.version-lock"));

  t.host.packages["nvidia-driver-pinning-595"] = {"nvidia-driver-pinning-595", "595.71.05-1ubuntu1",
                                                  "install ok installed", true};
  auto r = Driver(t);
  const auto* lock = FindCode(r, "driver.version-lock");
  REQUIRE(lock);
  CHECK(lock->status == Status::kWarn);
  CHECK(lock->message ==
        "NVIDIA's version-locking package nvidia-driver-pinning-595 locks branch R595 but stack " +
            t.stack.name + " is on R535: apt would keep the driver on the other branch");
  CHECK(lock->fix ==
        std::optional<std::string>("sudo gpuprep apply --yes --only driver (or: sudo apt-get remove "
                                   "nvidia-driver-pinning-595)"));

  // A stack on R595 whose packages are installed under the unbranched names, with its branch's lock.
  t.stack.driver.branch = 595;
  t.stack.driver.packages = {{"nvidia-open-595", "", ""}};
  t.host.packages.erase("nvidia-driver-535");
  t.host.packages["nvidia-open"] = {"nvidia-open", "595.71.05-1ubuntu1", "install ok installed", false};
  auto same = Driver(t);
  const auto* ok = FindCode(same, "driver.version-lock");
  REQUIRE(ok);
  CHECK(ok->status == Status::kOk);
  CHECK(ok->message == "NVIDIA's version-locking package nvidia-driver-pinning-595 locks branch R595");
  // The unbranched name is the stack's package: its missing hold is reported under that name.
  const auto* unheld = FindCode(same, "driver.not-held");
  REQUIRE(unheld);
  CHECK(unheld->fix == std::optional<std::string>("sudo apt-mark hold nvidia-open"));

  t.host.packages.erase("nvidia-driver-pinning-595");
  auto without = Driver(t);
  const auto* none = FindCode(without, "driver.version-lock");
  REQUIRE(none);
  CHECK(none->status == Status::kOk);
  CHECK(none->message ==
        "no NVIDIA version-locking package is installed (gpuprep's pins and holds keep the "
        "driver at the stack's version)");
}
