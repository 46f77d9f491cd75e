// `gpuprep doctor` end to end through gp::cli::RunCli over the fixture host trees (--root): the verdicts
// each tree is built to show, exit codes, the JSON on stdout, the default-stack line on stderr, colour.
#include "support/cli.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace {

struct Run {
  int code = -1;
  std::string out, err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

Run Doctor(std::vector<std::string> args, bool tty = false, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "doctor");
  gp::test::CliRun r = gp::test::Gpuprep(args, {tty, std::move(env)});
  return Run{r.code, r.out, r.err};
}

std::string Tree(const std::string& name) { return std::string(GP_FIXTURES) + "/hosts/" + name; }

Run Json(const std::string& tree, const std::string& stack = "ubuntu22.04-r535-cuda12.2") {
  return Doctor({"--json", "--root", Tree(tree), "--manifest", stack});
}

const nlohmann::json& Layer(const nlohmann::json& doc, const std::string& name) {
  for (const auto& l : doc["layers"])
    if (l["name"] == name) return l;
  static const nlohmann::json kNone;
  FAIL("no layer " << name);
  return kNone;
}

bool HasLayer(const nlohmann::json& doc, const std::string& name) {
  for (const auto& l : doc["layers"])
    if (l["name"] == name) return true;
  return false;
}

// The finding of a layer whose message is `message`; fails the test when absent.
nlohmann::json Finding(const nlohmann::json& layer, const std::string& message) {
  for (const auto& f : layer["findings"])
    if (f["message"] == message) return f;
  FAIL("no finding \"" << message << "\" in " << layer.dump());
  return {};
}

}  // namespace

TEST_CASE("doctor --root healthy-h100: every layer ok on the R535 stack, exit 0", "[doctor][fixtures]") {
  Run r = Json("healthy-h100");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  auto doc = r.json();
  CHECK(doc["manifest"] == "ubuntu22.04-r535-cuda12.2");
  CHECK(doc["host"]["gpus"].size() == 8);
  for (const auto& l : doc["layers"]) {
    INFO(l.dump());
    // The stack marks its image's CUDA unknown (NVIDIA's 23.10 notes were not available): skip until it is
    // pinned.
    if (l["name"] == "image")
      CHECK((l["status"] == "skip" || l["status"] == "ok"));
    else if (l["name"] == "stack")  // the legacy stack: a newer one exists for this host (a warning, no move)
      CHECK(l["findings"][0]["code"] == "stack.newer-available");
    else
      CHECK(l["status"] == "ok");
  }
  CHECK(HasLayer(doc, "fabricmanager"));
  CHECK(Layer(doc, "driver")["found"] == "535.129.03");
  CHECK(Layer(doc, "cudnn")["found"] == "8.9.7.29");
  CHECK(doc["summary"]["fail"] == 0);
  CHECK(doc["summary"]["warn"] == 1);  // the stack row
  CHECK(doc["summary"]["ok"].get<int>() + doc["summary"]["skip"].get<int>() == 11);
}

TEST_CASE("doctor --root h200-open-595: the stack row on an R595 stack and on an older R580 one",
          "[doctor][fixtures]") {
  // The default for a new H200 host is the long-term-support R580 stack; an R595 stack is newer (driver and
  // CUDA), so doctor does not send a host on it back to R580.
  auto r595 = Layer(Json("h200-open-595", "hopper-r595.91.07-cuda13.2.2").json(), "stack");
  CHECK(r595["status"] == "ok");
  CHECK(r595["findings"][0]["code"] == "stack.chosen");
  CHECK(
      r595["findings"][0]["message"] ==
      "hopper-r595.91.07-cuda13.2.2 (driver 595.91.07, CUDA 13.2.2) is newer than "
      "hopper-r580.173.02-cuda13.0.3 (driver 580.173.02, CUDA 13.0.3), gpuprep's choice for a new host like "
      "this one, which prefers a long-term-support driver branch");
  // A host on the first R580 stack is pointed to the R580 successor, not to R595.
  auto old = Layer(Json("h200-open-595", "hopper-r580-cuda13.0").json(), "stack");
  CHECK(old["findings"][0]["code"] == "stack.newer-available");
  CHECK(old["findings"][0]["message"].get<std::string>().rfind(
            "a newer stack exists for this host: hopper-r580.173.02-cuda13.0.3 (", 0) == 0);
}

TEST_CASE("doctor --root bare-nouveau: nouveau and no driver", "[doctor][fixtures]") {
  Run r = Json("bare-nouveau");
  CHECK(r.code == 1);
  auto doc = r.json();
  auto driver = Layer(doc, "driver");
  CHECK(driver["status"] == "fail");
  CHECK(Finding(
            driver,
            "nouveau (the open-source driver) is bound to the GPUs: the NVIDIA driver cannot load")["fix"] ==
        "sudo gpuprep apply --yes --only driver (or: printf 'blacklist nouveau\\noptions nouveau "
        "modeset=0\\n' | sudo tee "
        "/etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot)");
  CHECK(Finding(driver, "NVIDIA driver not installed")["fix"] == "sudo gpuprep apply --yes --only driver");
  CHECK(Finding(
            driver,
            "no kernel headers for 5.15.0-105-generic: DKMS cannot build the nvidia module for it")["fix"] ==
        "sudo apt-get install linux-headers-5.15.0-105-generic");
  CHECK(Layer(doc, "gpu")["status"] == "ok");
}

TEST_CASE("doctor --root mismatch: module != library -> reboot", "[doctor][fixtures]") {
  Run r = Json("mismatch");
  CHECK(r.code == 1);
  auto doc = r.json();
  auto driver = Layer(doc, "driver");
  CHECK(driver["status"] == "fail");
  CHECK(driver["found"] == "535.104.05");
  CHECK(Finding(driver,
                "kernel module 535.104.05 != userspace driver 535.129.03 (\"Failed to initialize NVML: "
                "Driver/library version mismatch\")")["fix"] == "sudo reboot");
  CHECK(Layer(doc, "os")["status"] == "warn");
  CHECK(Layer(doc, "os")["fix"] == "sudo reboot");
}

TEST_CASE("doctor --root nvswitch-no-fm: NVSwitches without fabric manager", "[doctor][fixtures]") {
  auto doc = Json("nvswitch-no-fm").json();
  auto fm = Layer(doc, "fabricmanager");
  CHECK(fm["status"] == "fail");
  CHECK(fm["detail"] == "4 NVSwitches but no fabric manager: CUDA finds no usable GPU until it runs");
  CHECK(fm["fix"] == "sudo gpuprep apply --yes --only fabricmanager");
  CHECK(Layer(doc, "driver")["status"] == "ok");
}

TEST_CASE("doctor --root blackwell-old-driver: B200 on R535", "[doctor][fixtures]") {
  auto doc = Json("blackwell-old-driver").json();
  auto driver = Layer(doc, "driver");
  CHECK(driver["status"] == "fail");
  CHECK(Finding(driver, "driver branch 535 does not support B200 (needs R570 or later)")["fix"] ==
        "choose a stack with driver branch 570 or later: gpuprep manifest list");
  CHECK(Finding(Layer(doc, "cuda"),
                "the stack's CUDA 12.2.2 does not support B200 (compute capability 10.0 needs "
                "CUDA 12.8 or later)")["status"] == "fail");
  // On the Blackwell stack the same host only needs its driver replaced.
  auto bw = Json("blackwell-old-driver", "blackwell-r580-cuda13.0").json();
  CHECK(
      Finding(Layer(bw, "driver"), "driver branch 535 does not support B200 (needs R570 or later)")["fix"] ==
      "sudo gpuprep apply --yes --only driver");
  // Several driver findings share that fix; the layer prints it once.
  CHECK(Layer(bw, "driver")["fix"] ==
        "sudo gpuprep apply --yes --only driver; sudo systemctl enable --now nvidia-persistenced");
}

TEST_CASE("doctor --root v100-new-driver: V100 past its last branch", "[doctor][fixtures]") {
  auto doc = Json("v100-new-driver").json();
  auto driver = Layer(doc, "driver");
  CHECK(driver["found"] == "590.44.01");
  CHECK(
      Finding(driver,
              "driver branch 590 no longer supports Tesla V100 SXM2 32GB (its last branch is R580)")["fix"] ==
      "sudo gpuprep apply --yes --only driver");
  CHECK(doc["host"]["cpus"] == 40);
  CHECK(HasLayer(doc, "fabricmanager") == false);
}

TEST_CASE("doctor --root open-module: open kernel module, CDI, toolkit below a CVE fix",
          "[doctor][fixtures]") {
  auto doc = Json("open-module", "hopper-r580-cuda13.0").json();
  CHECK(Layer(doc, "driver")["found"] == "565.57.01");
  auto tk = Layer(doc, "container_toolkit");
  CHECK(tk["status"] == "fail");
  CHECK(tk["found"] == "1.17.3");
  CHECK(Finding(tk,
                "toolkit 1.17.3 is affected by CVE-2025-23359 (fixed in 1.17.4); CVE-2025-23266, "
                "CVE-2025-23267 (fixed in 1.17.8); CVE-2026-24260 (fixed in 1.19.1)")["fix"] ==
        "sudo gpuprep apply --yes --only container_toolkit");
  CHECK(Layer(doc, "os")["status"] == "ok");
  CHECK(doc["host"]["shm_bytes"] == 512ULL << 30);
}

TEST_CASE("doctor --root secure-boot-unsigned: unsigned DKMS module, interrupted dpkg",
          "[doctor][fixtures]") {
  auto doc = Json("secure-boot-unsigned").json();
  CHECK(
      Finding(Layer(doc, "driver"),
              "Secure Boot is on and the DKMS-built nvidia module is not signed with an "
              "enrolled key: the kernel refuses to load it")["fix"] ==
      "sudo update-secureboot-policy --new-key && sudo update-secureboot-policy --enroll-key && sudo reboot "
      "(enroll the key in MokManager), or turn Secure Boot off");
  auto os = Layer(doc, "os");
  CHECK(os["status"] == "fail");
  CHECK(os["fix"] == "sudo dpkg --configure -a");
}

TEST_CASE("doctor: the default stack is named on stderr in one line", "[doctor][fixtures]") {
  Run r = Doctor({"--json", "--root", Tree("healthy-h100")});
  REQUIRE(r.err.rfind("gpuprep: using stack ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.err.find("supports ubuntu 22.04 and hopper GPUs") != std::string::npos);
  auto doc = r.json();
  CHECK(r.err.find("using stack " + doc["manifest"].get<std::string>() + ": ") != std::string::npos);
}

TEST_CASE("doctor: a bad manifest is one line and exit 2, before any probing", "[doctor][fixtures]") {
  Run r = Doctor({"--root", Tree("healthy-h100"), "--manifest", "no-such-stack"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("gpuprep: error: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

TEST_CASE("doctor table: colour on a terminal, never with NO_COLOR or --json", "[doctor][fixtures]") {
  std::vector<std::string> args = {"--root", Tree("mismatch"), "--manifest", "ubuntu22.04-r535-cuda12.2"};
  Run tty = Doctor(args, true);
  CHECK(tty.code == 1);
  CHECK(tty.out.find("\033[1;31mfail\033[0m") != std::string::npos);
  Run no_color = Doctor(args, true, {{"NO_COLOR", "1"}});
  CHECK(no_color.out.find('\033') == std::string::npos);
  CHECK(no_color.out.find("fix: sudo reboot\n") != std::string::npos);
  Run pipe = Doctor(args, false);
  CHECK(pipe.out == no_color.out);
  args.push_back("--json");
  CHECK(Doctor(args, true).out.find('\033') == std::string::npos);
}

TEST_CASE("doctor --verbose: where stack values and host facts came from", "[doctor][fixtures]") {
  Run r = Doctor({"--verbose", "--root", Tree("healthy-h100"), "--manifest", "ubuntu22.04-r535-cuda12.2"});
  CHECK(r.code == 0);
  CHECK(r.out.find("\nstack ubuntu22.04-r535-cuda12.2 from ") != std::string::npos);
  CHECK(r.out.find("driver.version") != std::string::npos);
  CHECK(r.out.find("host facts from a --root tree or snapshot\n") != std::string::npos);
  CHECK(r.out.find("kernel module and userspace driver agree") != std::string::npos);
}

TEST_CASE("doctor: --root that is not a directory is a flag error, and an empty tree names the missing OS",
          "[doctor]") {
  Run missing = Doctor({"--root", std::string(GP_FIXTURES) + "/no-such-tree"});
  CHECK(missing.code == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err ==
        "gpuprep: error: --root: " + std::string(GP_FIXTURES) + "/no-such-tree: not a directory\n");

  // A relative --root is relative to the working directory, as a user typing it expects.
  const std::string relative =
      std::filesystem::relative(Tree("healthy-h100"), std::filesystem::current_path()).string();
  REQUIRE(relative.front() != '/');
  Run rel = Doctor({"--json", "--root", relative, "--manifest", "ubuntu22.04-r535-cuda12.2"});
  CHECK(rel.code == 0);
  CHECK(rel.json()["summary"]["fail"] == 0);

  Run empty = Doctor({"--root", std::string(GP_FIXTURES) + "/hosts/healthy-h100/usr/bin"});
  CHECK(empty.code == 2);
  CHECK(empty.err.find("no embedded stack supports an unknown OS (no /etc/os-release)") != std::string::npos);
}

TEST_CASE("doctor --root hgx-b200 and gb200-tray: the NVLink fabric verdicts", "[doctor][fixtures]") {
  auto doc = Json("hgx-b200", "blackwell-r580-cuda13.0").json();
  auto fm = Layer(doc, "fabricmanager");
  CHECK(fm["status"] == "ok");
  CHECK(fm["detail"].get<std::string>().find("no NVSwitch") == std::string::npos);
  CHECK(fm["findings"][0]["code"] == "fabricmanager.hgx-blackwell");
  CHECK(doc["host"]["fabric"]["platform"] == "hgx-blackwell");
  CHECK(doc["host"]["fabric"]["bridges"] == 4);
  CHECK(doc["host"]["fabric"]["connectx"].size() == 12);

  auto nonroot = Json("hgx-b200-nonroot", "blackwell-r580-cuda13.0").json();
  CHECK(nonroot["host"]["fabric"]["decided_by"] == "board");
  CHECK(Layer(nonroot, "fabricmanager")["status"] == "ok");
  CHECK(Layer(nonroot, "fabricmanager")["findings"][0]["code"] == "fabricmanager.vpd-not-read");

  auto tray = Json("gb200-tray", "blackwell-r580-cuda13.0").json();
  auto tfm = Layer(tray, "fabricmanager");
  CHECK(tfm["status"] == "skip");
  CHECK(tfm["findings"][0]["code"] == "fabricmanager.not-applicable");
}

TEST_CASE("doctor --since: a time journalctl is not passed is exit 2, as is --since with --root",
          "[doctor]") {
  Run bad = Doctor({"--root", Tree("healthy-h100"), "--since", "now; reboot"});
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err ==
        "gpuprep: error: --since: \"now; reboot\" is not a time doctor passes to journalctl: a date "
        "(2024-12-02), "
        "a date and time (\"2024-12-02 11:00[:00]\"), today, yesterday, or -N with s, min, h, d or w\n");
  Run root = Doctor({"--root", Tree("healthy-h100"), "--since", "today"});
  CHECK(root.code == 2);
  CHECK(root.err == "gpuprep: error: --since: the journal is read on the live host only, not with --root\n");
}
