// The doctor-JSON host codec: what HostToJson writes, HostFromJson reads back unchanged, and broken
// snapshots are refused with an error that points at the value.
#include "probe/host_json.h"

#include <catch2/catch.hpp>

#include "util/error.h"

using gp::probe::HostFacts;
using nlohmann::json;

namespace {

HostFacts SampleHost() {
  HostFacts h;
  h.os = {"ubuntu", "22.04", "Ubuntu 22.04.4 LTS", "jammy"};
  h.kernel = "5.15.0-105-generic";
  h.arch = "x86_64";
  h.cpus = 96;
  h.memory_bytes = 2164663713792ULL;
  h.shm_bytes = 1082331856896ULL;
  h.disk_free_bytes = 500000000000ULL;
  h.nvidia_pci = {{"0000:18:00.0", "0x10de", "0x2330", "0x030200", "nvidia", 0},
                  {"0000:05:00.0", "0x10de", "0x22a3", "0x068000", "", std::nullopt}};
  gp::probe::Gpu g;
  g.index = 0;
  g.pci = "0000:18:00.0";
  g.device_id = "0x2330";
  g.name = "H100 SXM5 80GB";
  g.architecture = "hopper";
  g.compute_capability = "9.0";
  g.memory_bytes = 85520809984ULL;
  g.driver = "nvidia";
  g.known = true;
  h.gpus.push_back(g);
  gp::probe::Gpu u;
  u.index = 1;
  u.pci = "0000:19:00.0";
  u.device_id = "0x1234";
  u.name = "unknown NVIDIA GPU 0x1234";
  h.gpus.push_back(u);
  h.nvswitch_count = 1;
  h.driver.module = {true, "535.161.08", true,
                     "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.161.08"};
  h.driver.userspace_version = "535.161.08";
  h.driver.userspace_source = "nvml";
  h.driver.nvml_error = "Driver/library version mismatch";
  h.driver.nvml_device_count = 8;
  h.driver.nouveau_blacklisted = true;
  h.driver.secure_boot = false;
  h.driver.kernel_headers = true;
  h.driver.dkms_module = true;
  h.driver.persistenced_enabled = true;
  h.driver.persistenced_detail = "enabled";
  h.cuda = {true, "12.2.140", "version.json", "/usr/local/cuda-12.2", std::nullopt, {"nvcc says 12.2"}};
  h.cudnn = {true, "8.9.7", "header:/usr/include/cudnn_version.h", "/usr/include", 12, {}};
  h.nccl = {false, "", "", "", std::nullopt, {}};
  h.packages["nvidia-driver-535"] = {"nvidia-driver-535", "535.161.08-0ubuntu1", "install ok installed",
                                     true};
  h.dpkg_interrupted = {"libnccl2"};
  h.docker.cli_found = true;
  h.docker.engine_reachable = true;
  h.docker.version = "26.1.3";
  h.docker.runtimes = {"nvidia", "runc"};
  h.docker.default_runtime = "runc";
  h.docker.cdi = true;
  h.docker.cdi_devices = {"nvidia.com/gpu=all"};
  h.docker.daemon_json_runtimes = {"nvidia"};
  h.toolkit.packages = {{"nvidia-container-toolkit", "1.17.8-1"}, {"libnvidia-container1", "1.17.8-1"}};
  h.toolkit.ctk_version = "1.17.8";
  h.fabricmanager = {true, "535.161.08", true, false};
  h.reboot_required = true;
  h.live = false;
  h.probe_notes = {"dlopen skipped under --root"};
  return h;
}

}  // namespace

TEST_CASE("HostToJson writes the stable keys of docs/json.md with their types", "[doctor][host_json]") {
  json j = gp::probe::HostToJson(SampleHost());
  CHECK(j["os"]["id"] == "ubuntu");
  CHECK(j["os"]["version_id"] == "22.04");
  CHECK(j["os"]["pretty_name"] == "Ubuntu 22.04.4 LTS");
  CHECK(j["kernel"] == "5.15.0-105-generic");
  CHECK(j["arch"] == "x86_64");
  CHECK(j["cpus"].is_number_integer());
  CHECK(j["memory_bytes"].get<uint64_t>() == 2164663713792ULL);
  CHECK(j["shm_bytes"].get<uint64_t>() == 1082331856896ULL);
  REQUIRE(j["gpus"].size() == 2);
  const json& g = j["gpus"][0];
  for (const char* key :
       {"index", "pci", "device_id", "name", "architecture", "compute_capability", "memory_bytes"})
    CHECK(g.contains(key));
  CHECK(g["compute_capability"] == "9.0");
  CHECK(g["memory_bytes"].get<uint64_t>() == 85520809984ULL);
  // Unknown values are null, not empty strings.
  CHECK(j["gpus"][1]["architecture"].is_null());
  CHECK(j["gpus"][1]["memory_bytes"].is_null());
  CHECK(j["docker"]["version"] == "26.1.3");
  CHECK(j["docker"]["runtimes"] == json::array({"nvidia", "runc"}));
  CHECK(j["docker"]["default_runtime"] == "runc");
  CHECK(j["docker"]["cdi"] == true);
}

TEST_CASE("HostToJson leaves out docker when nothing of Docker was found", "[doctor][host_json]") {
  HostFacts h = SampleHost();
  h.docker = {};
  CHECK_FALSE(gp::probe::HostToJson(h).contains("docker"));
}

TEST_CASE("HostToJson -> HostFromJson round trip keeps every field", "[doctor][host_json]") {
  HostFacts h = SampleHost();
  json first = gp::probe::HostToJson(h);
  HostFacts back = gp::probe::HostFromJson(first, "node.json");
  CHECK(gp::probe::HostToJson(back) == first);
  CHECK_FALSE(back.live);
  CHECK(back.gpus[0].memory_bytes == h.gpus[0].memory_bytes);
  CHECK_FALSE(back.gpus[1].memory_bytes.has_value());
  CHECK(back.driver.secure_boot == std::optional<bool>(false));
  CHECK(back.driver.nvml_error == std::optional<std::string>("Driver/library version mismatch"));
  CHECK(back.cudnn.cuda_major == std::optional<int>(12));
  CHECK(back.packages.at("nvidia-driver-535").held);
  CHECK(back.nvidia_pci[1].numa_node == std::nullopt);
  CHECK(back.docker.cdi_devices == std::vector<std::string>{"nvidia.com/gpu=all"});

  // A live probe reads back as a snapshot: everything equal but `live`.
  h.live = true;
  json live = gp::probe::HostToJson(h);
  HostFacts snap = gp::probe::HostFromJson(live, "node.json");
  json again = gp::probe::HostToJson(snap);
  again["live"] = true;
  CHECK(again == live);
}

TEST_CASE("HostFromSnapshotText reads the host inside a whole doctor document", "[doctor][host_json]") {
  json doc = {{"gpuprep", "0.1.0"},
              {"manifest", "x"},
              {"host", gp::probe::HostToJson(SampleHost())},
              {"layers", json::array()},
              {"summary", {{"ok", 0}, {"warn", 0}, {"fail", 0}, {"skip", 0}}}};
  HostFacts h = gp::probe::HostFromSnapshotText(doc.dump(2), "node.json");
  CHECK(h.gpus.size() == 2);
  CHECK(h.os.codename == "jammy");
}

TEST_CASE("HostFromJson accepts docs/json.md's minimal host object", "[doctor][host_json]") {
  const char* text = R"({
    "os": {"id": "ubuntu", "version_id": "22.04", "pretty_name": "Ubuntu 22.04.4 LTS"},
    "kernel": "5.15.0-105-generic", "arch": "x86_64",
    "cpus": 96, "memory_bytes": 2164663713792, "shm_bytes": 1082331856896,
    "gpus": [{"index": 0, "pci": "0000:18:00.0", "device_id": "0x2330", "name": "H100 SXM5 80GB",
              "architecture": "hopper", "compute_capability": "9.0", "memory_bytes": 85520809984}],
    "docker": {"version": "26.1.3", "runtimes": ["runc", "nvidia"], "default_runtime": "runc", "cdi": false},
    "something_new": {"tolerated": true}
  })";
  HostFacts h = gp::probe::HostFromSnapshotText(text, "node.json");
  REQUIRE(h.gpus.size() == 1);
  CHECK(h.gpus[0].known);
  CHECK(h.gpus[0].architecture == "hopper");
  CHECK(h.docker.engine_reachable);
  CHECK(h.docker.runtimes == std::vector<std::string>{"runc", "nvidia"});
  CHECK_FALSE(h.live);
}

namespace {
std::string ErrorOf(const std::string& text) {
  try {
    gp::probe::HostFromSnapshotText(text, "node.json");
  } catch (const gp::Error& e) {
    CHECK(e.code() == gp::kExitUsage);
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("HostFromSnapshotText errors point at the value, word for word", "[doctor][host_json]") {
  std::string base = R"({"host": {
  "os": {"id": "ubuntu", "version_id": "22.04"},
  "kernel": "6.1", "arch": "x86_64", "cpus": 4, "memory_bytes": 1, "shm_bytes": 1,
  "gpus": [
    {"index": 0, "pci": "a", "device_id": "0x2330", "name": "H100"},
    {"index": "one", "pci": "b", "device_id": "0x2330", "name": "H100"}
  ]
}})";
  CHECK(ErrorOf(base) == "node.json:6:15: host.gpus[1].index: expected a non-negative integer");

  CHECK(ErrorOf(R"({"os": {"id": "debian", "version_id": "12"}, "kernel": "6.1", "arch": "x86_64",
 "cpus": 2, "memory_bytes": 1, "shm_bytes": 1})") == "node.json:1:1: missing required key \"gpus\"");

  CHECK(ErrorOf("{\"host\": {\n  \"os\": 7}}") == "node.json:2:9: host.os: expected an object");
  CHECK(ErrorOf("{\"host\": {\"os\": {\"id\": \"debian\"}}}") ==
        "node.json:1:17: host.os: missing required key \"version_id\"");
  CHECK(ErrorOf("{\"host\": []}") == "node.json:1:10: host: expected an object");
  CHECK(ErrorOf("{\n  \"host\": {,}\n}") ==
        "node.json:2:12: invalid JSON: syntax error while parsing object key - unexpected ','; "
        "expected string literal");
}

TEST_CASE("HostFromSnapshotText: each integer is checked against its field's type", "[doctor][host_json]") {
  const std::string base = R"({"host": {
  "os": {"id": "ubuntu", "version_id": "22.04"},
  "kernel": "6.1", "arch": "x86_64", "cpus": CPUS, "memory_bytes": 1, "shm_bytes": 1,
  "gpus": [{"index": 0, "pci": "a", "device_id": "0x2330", "name": "H100", "memory_bytes": MEM}]
}})";
  auto with = [&](const std::string& cpus, const std::string& mem) {
    std::string s = base;
    s.replace(s.find("CPUS"), 4, cpus);
    s.replace(s.find("MEM"), 3, mem);
    return s;
  };
  CHECK(ErrorOf(with("4", "85520809984")) == "(no error)");
  CHECK(ErrorOf(with("2147483648", "1")) ==
        "node.json:3:46: host.cpus: expected an integer from 0 to 2147483647");
  CHECK(ErrorOf(with("4294967297", "1")) ==
        "node.json:3:46: host.cpus: expected an integer from 0 to 2147483647");
  CHECK(ErrorOf(with("4", "18446744073709551615")) ==
        "node.json:4:92: host.gpus[0].memory_bytes: expected an integer from 0 to 9223372036854775807");
}

TEST_CASE("HostFromSnapshotText: nothing after the document, no GPU index twice", "[doctor][host_json]") {
  const std::string doc = R"({"host": {
  "os": {"id": "ubuntu", "version_id": "22.04"},
  "kernel": "6.1", "arch": "x86_64", "cpus": 4, "memory_bytes": 1, "shm_bytes": 1,
  "gpus": [{"index": 0, "pci": "a", "device_id": "0x2330", "name": "H100"},
           {"index": 0, "pci": "b", "device_id": "0x2330", "name": "H100"}]
}})";
  CHECK(ErrorOf(doc) == "node.json:5:22: host.gpus[1].index: GPU 0 is listed twice");
  std::string one = doc;
  one.replace(one.find("\"index\": 0, \"pci\": \"b\""), 10, "\"index\": 1");
  CHECK(ErrorOf(one) == "(no error)");
  CHECK(ErrorOf(one + std::string(1, '\0') + "garbage") == "node.json:6:3: a NUL byte: not JSON text");
}

TEST_CASE("HostFromJson without text names the path at 1:1", "[doctor][host_json]") {
  json j = gp::probe::HostToJson(SampleHost());
  j["cpus"] = "many";
  try {
    gp::probe::HostFromJson(j, "node.json");
    FAIL("no error");
  } catch (const gp::FileError& e) {
    CHECK(std::string(e.what()) == "node.json:1:1: cpus: expected a non-negative integer");
  }
}

TEST_CASE("HostToJson -> HostFromJson keeps the host identity; snapshots without it still load",
          "[doctor][host_json][identity]") {
  HostFacts h = SampleHost();
  h.hostname = "gpu-node-07";
  h.machine_id = "3f1c2a9e7b5d4c6f8a0b1c2d3e4f5a6b";
  h.gpus[0].uuid = "GPU-5b1c3f0e-8a3d-4c57-9d3e-2f1a0b9c8d7e";
  h.gpus[0].serial = "1654922005741";
  json j = gp::probe::HostToJson(h);
  CHECK(j["hostname"] == "gpu-node-07");
  CHECK(j["gpus"][0]["uuid"] == "GPU-5b1c3f0e-8a3d-4c57-9d3e-2f1a0b9c8d7e");
  CHECK(j["gpus"][1]["uuid"].is_null());
  HostFacts back = gp::probe::HostFromJson(j, "node.json");
  CHECK(back.hostname == "gpu-node-07");
  CHECK(back.machine_id == h.machine_id);
  CHECK(back.gpus[0].serial == "1654922005741");
  j.erase("hostname");
  j.erase("machine_id");
  j["gpus"][0].erase("uuid");
  CHECK(gp::probe::HostFromJson(j, "old.json").hostname.empty());
}

TEST_CASE("HostToJson -> HostFromJson keeps the NVLink fabric facts; hosts without them write none",
          "[doctor][host_json]") {
  HostFacts h = SampleHost();
  CHECK_FALSE(gp::probe::HostToJson(h).contains("fabric"));
  CHECK_FALSE(gp::probe::HostToJson(h)["gpus"][0].contains("fabric_state"));
  h.gpus[0].fabric_state = "in-progress";
  h.gpus[1].fabric_state = "completed";
  h.gpus[1].fabric_status = 0;
  h.fabric.platform = "hgx-blackwell";
  h.fabric.decided_by = "vpd";
  h.fabric.bridges = 1;
  h.fabric.connectx = {{"0000:05:00.0", "bridge", ""}, {"0000:19:00.0", "invalid", "no end tag"}};
  h.fabric.nvlsm = {true, "2025.06.10", false, true};
  h.fabric.ib_umad_available = true;
  h.fabric.ib_umad_detail = "module of the running kernel";
  json first = gp::probe::HostToJson(h);
  HostFacts back = gp::probe::HostFromJson(first, "node.json");
  CHECK(gp::probe::HostToJson(back) == first);
  CHECK(back.gpus[0].fabric_state == "in-progress");
  CHECK_FALSE(back.gpus[0].fabric_status);
  CHECK(back.gpus[1].fabric_status == std::optional<int>(0));
  CHECK(back.fabric.connectx.size() == 2);
  CHECK(back.fabric.connectx[1].detail == "no end tag");
  CHECK(back.fabric.nvlsm.running);
  CHECK(back.fabric.ib_umad_available);

  json bad = first;
  bad["gpus"][1]["fabric_status"] = "zero";
  CHECK_THROWS_WITH(gp::probe::HostFromJson(bad, "node.json"),
                    Catch::Contains("gpus[1].fabric_status: expected an integer"));
  bad = first;
  bad["fabric"]["connectx"][0].erase("vpd");
  CHECK_THROWS_WITH(gp::probe::HostFromJson(bad, "node.json"),
                    Catch::Contains("missing required key \"vpd\""));
}

TEST_CASE("HostToJson -> HostFromJson keeps the installed kernels; a bad kernel name is refused",
          "[doctor][host_json]") {
  HostFacts h = SampleHost();
  CHECK_FALSE(gp::probe::HostToJson(h).contains("boot"));
  gp::probe::InstalledKernel k;
  k.release = "6.8.0-62-generic";
  k.source = "dpkg";
  k.modules_dep = true;
  k.dkms_version = "535.129.03";
  k.dkms_log = "/var/lib/dkms/nvidia/535.129.03/6.8.0-62-generic/x86_64/log/make.log";
  k.dkms_error = "nv.c:1:1: error: x";
  h.boot.kernels.push_back(k);
  h.boot.dkms_versions = {"535.129.03"};
  h.boot.probed = true;
  h.boot.next_kernel = "6.8.0-62-generic";
  h.boot.next_detail = "grubenv's one-shot next_entry \"0\"";
  json first = gp::probe::HostToJson(h);
  HostFacts back = gp::probe::HostFromJson(first, "node.json");
  CHECK(gp::probe::HostToJson(back) == first);
  CHECK(back.boot.probed);
  CHECK(back.boot.kernels[0].dkms_error == "nv.c:1:1: error: x");

  json bad = first;
  bad["boot"]["kernels"][0]["release"] = "../../etc";
  CHECK_THROWS_WITH(gp::probe::HostFromJson(bad, "node.json"),
                    Catch::Contains("boot.kernels[0].release: not a kernel release"));
  bad = first;
  bad["boot"]["next_kernel"] = "6.8.0-62-generic; rm -rf /";
  CHECK_THROWS_WITH(gp::probe::HostFromJson(bad, "node.json"),
                    Catch::Contains("boot.next_kernel: not a kernel release"));
}

// Snapshots written before "running" was its own field: "enabled" then meant enabled or running, and the
// detail says which.
TEST_CASE("host json: an older snapshot's persistenced detail gives enabled and running apart",
          "[probe][json]") {
  HostFacts h = SampleHost();
  h.driver.persistenced_enabled = true;  // the old meaning: running, not enabled
  h.driver.persistenced_detail = "nvidia-persistenced.service not enabled, running (pid 812)";
  json j = gp::probe::HostToJson(h);
  j["driver"].erase("persistenced_running");
  HostFacts back = gp::probe::HostFromJson(j, "old.json");
  CHECK_FALSE(back.driver.persistenced_enabled);
  CHECK(back.driver.persistenced_running);
  h.driver.persistenced_running = true;
  h.driver.persistenced_enabled = false;
  HostFacts now = gp::probe::HostFromJson(gp::probe::HostToJson(h), "new.json");
  CHECK(now.driver.persistenced_running);
  CHECK_FALSE(now.driver.persistenced_enabled);
}
