// The docker renderer, end to end: `gpuprep launch` prints a command, a real POSIX shell runs it with the
// real docker CLI against the stand-in Engine API (tests/support/fake_dockerd.py), and the container
// create request docker sends must equal the run config `--format json` reports for the same flags.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "support/launch_support.h"
#include "support/temp_dir.h"

using gp::test::Gpuprep;
using gp::test::kH100x2;
using gp::test::kImage;
using gp::test::Snapshot;
using nlohmann::json;

namespace {

// The docker CLI's major version (`docker version --format {{.Client.Version}}`: "28.5.1" -> 28); 0 unknown.
int DockerCliMajor() {
  FILE* p = ::popen("docker version --format '{{.Client.Version}}' 2>/dev/null", "r");
  if (!p) return 0;
  char buf[64] = {};
  const bool read = std::fgets(buf, sizeof buf, p) != nullptr;
  ::pclose(p);
  return read ? std::atoi(buf) : 0;
}

// The DeviceRequests docker derives from the config's GPUs (docker/cli opts: --gpus and CDI --device).
json ExpectedDeviceRequests(const json& config) {
  const json& g = config["gpus"];
  if (g["kind"] == "none") return json::array();
  if (config["gpu_access"] == "cdi") {
    json ids = json::array();
    if (g["kind"] == "all")
      ids.push_back("nvidia.com/gpu=all");
    else if (g["kind"] == "count")
      for (int i = 0; i < g["count"].get<int>(); ++i) ids.push_back("nvidia.com/gpu=" + std::to_string(i));
    else
      for (int i : g["indices"]) ids.push_back("nvidia.com/gpu=" + std::to_string(i));
    return json::array({{{"Driver", "cdi"},
                         {"Count", 0},
                         {"DeviceIDs", ids},
                         {"Capabilities", nullptr},
                         {"Options", nullptr}}});
  }
  json req = {{"Driver", ""},
              {"Count", 0},
              {"DeviceIDs", nullptr},
              {"Capabilities", {{"gpu"}}},
              {"Options", json::object()}};
  if (g["kind"] == "all")
    req["Count"] = -1;
  else if (g["kind"] == "count")
    req["Count"] = g["count"];
  else {
    req["DeviceIDs"] = json::array();
    for (int i : g["indices"]) req["DeviceIDs"].push_back(std::to_string(i));
  }
  return json::array({req});
}

// Renders the same flags as docker and as json, runs the docker text through sh + docker, and checks the
// recorded create request field by field against the json config. Returns the config.
json RoundTrip(const std::vector<std::string>& flags, const std::string& format = "docker") {
  std::vector<std::string> docker_args = {"launch", "--format", format};
  std::vector<std::string> json_args = {"launch", "--format", "json"};
  // flags may end in "--" COMMAND...; the format must come before it.
  docker_args.insert(docker_args.end(), flags.begin(), flags.end());
  json_args.insert(json_args.end(), flags.begin(), flags.end());
  auto text = Gpuprep(docker_args);
  INFO(text.err);
  REQUIRE(text.code == 0);
  auto js = Gpuprep(json_args);
  REQUIRE(js.code == 0);
  const json doc = json::parse(js.out);
  const json& config = doc["config"];

  // One stand-in Engine for every round trip of the binary: starting Python costs more than the round trip
  // itself, and RunShell clears what the previous run recorded.
  static gp::test::FakeDockerd dockerd;
  std::string err;
  INFO(text.out);
  const int rc = dockerd.RunShell(text.out, &err);
  INFO(err);
  CHECK(rc == 125);  // the stand-in refuses the create after recording it
  CHECK(err.find("fake dockerd: create recorded") != std::string::npos);
  const json rec = dockerd.LastCreate();
  REQUIRE(rec.is_object());
  const json& body = rec["body"];
  const json& hc = body["HostConfig"];

  CHECK(body["Image"] == config["image"]);
  json cmd = format == "torchrun" ? json(doc["torchrun_argv"]) : config["command"];
  if (cmd.empty())
    CHECK(body["Cmd"].is_null());
  else
    CHECK(body["Cmd"] == cmd);
  json env = json::array();
  for (const auto& e : config["env"])
    env.push_back(e["name"].get<std::string>() + "=" + e["value"].get<std::string>());
  if (env.empty()) {
    CHECK(body["Env"].is_null());
  } else {  // docker de-duplicates -e through a map: the order of Env is not the command line's
    std::vector<std::string> want = env, got = body["Env"];
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
  json binds = json::array();
  for (const auto& m : config["mounts"])
    binds.push_back(m["source"].get<std::string>() + ":" + m["target"].get<std::string>() +
                    (m["read_only"] ? ":ro" : ""));
  if (binds.empty()) {
    CHECK(hc["Binds"].is_null());
  } else {  // docker keeps -v in a set: the order of Binds is not the command line's
    std::vector<std::string> want = binds, got = hc["Binds"];
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
  CHECK(hc["IpcMode"] == config["ipc"]);
  CHECK(hc["ShmSize"] == (config["shm_bytes"].is_null() ? json(0) : config["shm_bytes"]));
  json ulimits = json::array();
  for (const auto& u : config["ulimits"])
    ulimits.push_back({{"Name", u["name"]}, {"Hard", u["hard"]}, {"Soft", u["soft"]}});
  CHECK(hc["Ulimits"] == ulimits);
  const json devreq = hc["DeviceRequests"].is_null() ? json::array() : hc["DeviceRequests"];
  CHECK(devreq == ExpectedDeviceRequests(config));
  json devices = json::array(), got_devices = json::array();
  for (const auto& d : config["devices"])
    devices.push_back({{"PathOnHost", d}, {"PathInContainer", d}, {"CgroupPermissions", "rwm"}});
  if (hc["Devices"].is_array())  // CDI names go to DeviceRequests; host paths stay here
    for (const auto& d : hc["Devices"])
      if (d["PathOnHost"].get<std::string>().rfind('/', 0) == 0) got_devices.push_back(d);
  CHECK(got_devices == devices);
  json caps = json::array();
  if (hc["CapAdd"].is_array())
    for (const auto& cap : hc["CapAdd"]) {  // newer clients write capabilities with their CAP_ prefix
      std::string name = cap;
      caps.push_back(name.rfind("CAP_", 0) == 0 ? name.substr(4) : name);
    }
  CHECK(caps == config["cap_add"]);
  CHECK(hc["AutoRemove"] == true);
  CHECK(hc["NetworkMode"] == (config["network"].is_null() ? json("default") : config["network"]));
  CHECK(body["WorkingDir"] == (config["workdir"].is_null() ? json("") : config["workdir"]));
  CHECK(body["Tty"] == config["interactive"]);
  if (config["name"].is_null())
    CHECK(!rec["query"].contains("name"));
  else
    CHECK(rec["query"]["name"] == json::array({config["name"]}));
  CHECK(doc["docker_argv"][0] == "docker");
  return config;
}

// kH100x2 with two active InfiniBand ports: a node of an RDMA cluster, written in `dir`; its path.
std::string IbSnapshot(const gp::test::TempDir& dir) {
  std::ifstream in(kH100x2);
  json doc = json::parse(in);
  doc["host"]["network"] = {
      {"rdma",
       json::array({{{"name", "mlx5_0"},
                     {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "InfiniBand"}}}}},
                    {{"name", "mlx5_1"},
                     {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "InfiniBand"}}}}}})}};
  return dir.Write("ib-node.json", doc.dump());
}

}  // namespace

TEST_CASE("launch docker: a node of two, on InfiniBand: NCCL's environment, the RDMA devices and IPC_LOCK",
          "[launch]") {
  const gp::test::TempDir tmp;
  json c = RoundTrip({"--host", IbSnapshot(tmp), "--image", kImage, "--nodes", "2", "--node-rank", "1",
                      "--master", "10.2.0.1:29500", "--", "python", "train.py"});
  CHECK(c["devices"] == json::array({"/dev/infiniband"}));
  CHECK(c["cap_add"] == json::array({"IPC_LOCK"}));
  CHECK(c["network"] == "host");
  CHECK(c["env"].dump().find("{\"name\":\"NCCL_IB_HCA\",\"value\":\"=mlx5_0:1,mlx5_1:1\"}") !=
        std::string::npos);
  CHECK(c["env"].dump().find("{\"name\":\"NCCL_NET\",\"value\":\"IB\"}") != std::string::npos);
}

TEST_CASE("launch docker: node 1's command from both nodes' snapshots reaches the engine with node 1's ports",
          "[launch]") {
  json c = RoundTrip({"--host", gp::test::Snapshot("h100x2-roce-node0.json"), "--host",
                      gp::test::Snapshot("h100x2-roce-node1.json"), "--image", kImage, "--nodes", "2",
                      "--node-rank", "1", "--master", "10.2.0.1:29500", "--", "python", "train.py"});
  CHECK(c["network"] == "host");
  CHECK(c["devices"] == json::array({"/dev/infiniband"}));
  const std::string env = c["env"].dump();
  CHECK(env.find("{\"name\":\"NCCL_IB_HCA\",\"value\":\"=mlx5_0:1\"}") != std::string::npos);
  CHECK(env.find("{\"name\":\"NODE_RANK\",\"value\":\"1\"}") != std::string::npos);
  CHECK(env.find("{\"name\":\"NCCL_SOCKET_IFNAME\",\"value\":\"^docker,lo\"}") != std::string::npos);
}

TEST_CASE("launch docker: --gpus 0,1 reaches the engine as DeviceIDs, with NGC's ipc and ulimits",
          "[launch]") {
  json c = RoundTrip({"--host", kH100x2, "--image", kImage, "--gpus", "0,1", "--", "python", "train.py"});
  CHECK(c["gpus"]["indices"] == json::array({0, 1}));
  CHECK(c["ipc"] == "host");
  CHECK(c["shm_bytes"].is_null());
  CHECK(c["ulimits"] ==
        json::parse(
            R"([{"name":"memlock","soft":-1,"hard":-1},{"name":"stack","soft":67108864,"hard":67108864}])"));
  auto text =
      Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "--gpus", "0,1", "--", "python", "train.py"});
  CHECK(text.out ==
        "docker run --rm \\\n"
        "  --gpus '\"device=0,1\"' \\\n"
        "  --ipc=host \\\n"
        "  --ulimit memlock=-1 --ulimit stack=67108864 \\\n"
        "  nvcr.io/nvidia/pytorch:24.06-py3 \\\n"
        "  python train.py\n");
}

TEST_CASE("launch docker: awkward mounts, env and command survive the shell exactly", "[launch]") {
  const std::string src = "/tmp/it's a \"dir\" $HOME\\x";
  const std::string value = "a b 'single' \"double\" $PATH `id` \\back\\slash\nsecond line\t!";
  json c = RoundTrip({"--host",    kH100x2,
                      "--image",   kImage,
                      "--gpus",    "1",
                      "--ipc",     "private",
                      "--shm",     "16g",
                      "-v",        src + ":/data dir:ro",
                      "-v",        "/scratch:/scratch",
                      "-e",        "WEIRD=" + value,
                      "-e",        "EMPTY=",
                      "--workdir", "/work space",
                      "--name",    "run-1.a_b",
                      "--",        "bash",
                      "-c",        "echo \"$WEIRD\" 'it''s' \\$x; exit 3",
                      "two words", "--json"});
  CHECK(c["mounts"][0]["source"] == src);
  CHECK(c["mounts"][0]["target"] == "/data dir");
  CHECK(c["env"][0]["value"] == value);
  CHECK(c["env"][1] == json({{"name", "EMPTY"}, {"value", ""}}));
  CHECK(c["shm_bytes"] == 17179869184ULL);
  CHECK(c["ipc"] == "private");
  CHECK(c["command"] ==
        json::array({"bash", "-c", "echo \"$WEIRD\" 'it''s' \\$x; exit 3", "two words", "--json"}));
}

TEST_CASE("launch docker: a CDI-only host gets --device nvidia.com/gpu=N", "[launch]") {
  const std::string cdi = Snapshot("h100x8-cdi.json");
  auto text = Gpuprep({"launch", "--host", cdi, "--image", kImage, "--gpus", "device=2,5"});
  CHECK(text.out.find("--device nvidia.com/gpu=2 \\\n  --device nvidia.com/gpu=5 \\\n") != std::string::npos);
  // The docker CLI reads CDI device names from 25.0 (Docker's CDI documentation: Docker Engine 25.0 and
  // later); an older one (Debian 12's docker.io 20.10) takes them for paths, so there is no round trip.
  if (const int major = DockerCliMajor(); major < 25) {
    WARN("skipped: the CDI round trips need docker 25 or later; this docker CLI is "
         << (major ? std::to_string(major) : std::string("unknown")));
    return;
  }
  json c = RoundTrip({"--host", cdi, "--image", kImage, "--gpus", "device=2,5", "--", "nvidia-smi"});
  CHECK(c["gpu_access"] == "cdi");
  c = RoundTrip({"--host", cdi, "--image", kImage, "--gpus", "3"});
  CHECK(c["gpus"]["count"] == 3);
  c = RoundTrip({"--host", cdi, "--image", kImage});
  CHECK(c["gpus"]["kind"] == "all");
  CHECK(c["gpus"]["count"] == 8);
}

TEST_CASE("launch docker: counts, all, none and the profile's private shm", "[launch]") {
  json c = RoundTrip({"--host", kH100x2, "--image", kImage, "--gpus", "2"});
  CHECK(c["gpus"]["kind"] == "count");
  c = RoundTrip({"--host", kH100x2, "--image", kImage});
  CHECK(c["gpus"]["kind"] == "all");
  c = RoundTrip({"--host", kH100x2, "--image", kImage, "--gpus", "none", "--", "python", "prep.py"});
  CHECK(c["gpus"]["kind"] == "none");
  // vision: 16 GiB per GPU with ipc private -> 32 GiB for 2 GPUs (well under half of the 2 TB host).
  c = RoundTrip({"--host", kH100x2, "--image", kImage, "--profile", "vision", "--ipc", "private", "-e",
                 "OMP_NUM_THREADS=4"});
  CHECK(c["shm_bytes"] == 34359738368ULL);
  CHECK(c["env"] == json::parse(R"([{"name":"OMP_NUM_THREADS","value":"4"}])"));
  CHECK(c["workdir"] == "/workspace");
}

TEST_CASE("launch docker: multi-node gets host networking, the rendezvous variables and NCCL's interface",
          "[launch]") {
  json c = RoundTrip({"--host", kH100x2, "--image", kImage, "--nodes", "2", "--node-rank", "1", "--master",
                      "10.0.0.1:29501", "--", "python", "train.py"});
  CHECK(c["network"] == "host");
  CHECK(c["env"] ==
        json::parse(R"([{"name":"MASTER_ADDR","value":"10.0.0.1"},{"name":"MASTER_PORT","value":"29501"},
                                   {"name":"NNODES","value":"2"},{"name":"NODE_RANK","value":"1"},
                                   {"name":"NCCL_SOCKET_IFNAME","value":"^docker,lo"},
                                   {"name":"NCCL_NET","value":"Socket"}])"));
  CHECK(c["devices"].empty());  // no RDMA device on this host
}

TEST_CASE("launch docker: a node of two on EFA: NCCL_NET names the plugin, its space survives the shell",
          "[launch]") {
  std::ifstream in(kH100x2);
  json doc = json::parse(in);
  doc["host"]["network"] = {
      {"rdma",
       json::array({{{"name", "rdmap16s27"},
                     {"efa", true},
                     {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "Unspecified"}}}}}})}};
  const gp::test::TempDir tmp;
  const std::string path = tmp.Write("efa-node.json", doc.dump());
  json c = RoundTrip({"--host", path, "--image", kImage, "--nodes", "2", "--node-rank", "0", "--master",
                      "10.2.0.1:29500", "--", "python", "train.py"});
  CHECK(c["env"].dump().find(R"({"name":"NCCL_NET","value":"AWS Libfabric"})") != std::string::npos);
  CHECK(c["env"].dump().find("NCCL_IB_HCA") == std::string::npos);  // EFA is not NCCL's IB transport
  CHECK(c["devices"] == json::array({"/dev/infiniband"}));
  CHECK(c["cap_add"] == json::array({"IPC_LOCK"}));
}

TEST_CASE("launch torchrun: the container command is torchrun with --nproc_per_node from the GPUs",
          "[launch]") {
  RoundTrip({"--host", kH100x2, "--image", kImage, "--gpus", "0,1", "--", "python", "-u", "train.py", "--lr",
             "1e-3"},
            "torchrun");
  auto js = Gpuprep({"launch",      "--format", "json",    "--host", kH100x2,       "--image", kImage,
                     "--gpus",      "0,1",      "--nodes", "2",      "--node-rank", "0",       "--master",
                     "node0:29500", "--",       "python",  "-m",     "pkg.train",   "x y"});
  REQUIRE(js.code == 0);
  CHECK(json::parse(js.out)["torchrun_argv"] ==
        json::array({"torchrun", "--nproc_per_node=2", "--nnodes=2", "--node_rank=0", "--master_addr=node0",
                     "--master_port=29500", "-m", "pkg.train", "x y"}));
  js = Gpuprep({"launch", "--format", "json", "--host", kH100x2, "--image", kImage, "--gpus", "1", "--",
                "./run.sh", "a"});
  CHECK(json::parse(js.out)["torchrun_argv"] ==
        json::array({"torchrun", "--nproc_per_node=1", "--no-python", "./run.sh", "a"}));
}

TEST_CASE("launch torchrun: python's own options keep python, under --no-python", "[launch]") {
  auto argv = [](std::vector<std::string> cmd) {
    std::vector<std::string> args = {"launch", "--format", "json", "--host",
                                     kH100x2,  "--image",  kImage, "--"};
    args.insert(args.end(), cmd.begin(), cmd.end());
    auto r = Gpuprep(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return json::parse(r.out)["torchrun_argv"].get<std::vector<std::string>>();
  };
  using V = std::vector<std::string>;
  // SCRIPT and -m MODULE are torchrun's own forms (it adds `python -u` itself).
  CHECK(argv({"python", "-u", "train.py", "-c", "x"}) ==
        V{"torchrun", "--nproc_per_node=2", "train.py", "-c", "x"});
  CHECK(argv({"/usr/bin/python3.12", "-u", "-m", "pkg.train", "-W"}) ==
        V{"torchrun", "--nproc_per_node=2", "-m", "pkg.train", "-W"});
  // Any other python option has no torchrun spelling: the command runs as given.
  CHECK(argv({"python", "-c", "print(1)"}) ==
        V{"torchrun", "--nproc_per_node=2", "--no-python", "python", "-c", "print(1)"});
  CHECK(argv({"python", "-W", "ignore", "train.py"}) ==
        V{"torchrun", "--nproc_per_node=2", "--no-python", "python", "-W", "ignore", "train.py"});
  CHECK(argv({"python3", "-u", "-X", "dev", "train.py"}) ==
        V{"torchrun", "--nproc_per_node=2", "--no-python", "python3", "-u", "-X", "dev", "train.py"});
  CHECK(argv({"python", "-m", "-x"}) ==
        V{"torchrun", "--nproc_per_node=2", "--no-python", "python", "-m", "-x"});
  CHECK(argv({"python"}) == V{"torchrun", "--nproc_per_node=2", "--no-python", "python"});
  CHECK(argv({"python-wrapper", "train.py"}) ==
        V{"torchrun", "--nproc_per_node=2", "--no-python", "python-wrapper", "train.py"});

  auto text = Gpuprep({"launch", "--format", "torchrun", "--image", "none", "--host", kH100x2, "--", "python",
                       "-c", "print(1)"});
  CHECK(text.out == "torchrun --nproc_per_node=2 --no-python python -c 'print(1)'\n");
}
