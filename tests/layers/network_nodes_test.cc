// The network layer when the user says the host runs jobs on several nodes (doctor --nodes N): the layer is
// shown on every host, its faults fail, the distance between a GPU and its NIC stays a warning, and a host
// without RDMA warns (TCP) or fails (no NIC up). Without --nodes the same trees stay at most warnings
// (network_test.cc). A stack's workload.nodes asks the same as --nodes. Hosts are probed sysfs trees
// (tests/support/rdma_trees.h).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/steps.h"
#include "sample.h"
#include "support/cli.h"
#include "support/rdma_trees.h"

using namespace gp;
using layers::Finding;
using layers::LayerReport;
using layers::Status;
using test::RdmaPortSpec;

namespace {

const Finding* FindCode(const LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

LayerReport CheckNodes(test::TempRoot& t, test::Inputs& in, int nodes) {
  probe::ProbeEnv env;
  env.fs = &t.fs();
  env.compat = &manifest::EmbeddedCompat();
  in.host.network = {};
  probe::ProbeNetwork(env, in.host);
  layers::CheckInput ci = in.in();
  ci.nodes = nodes;
  LayerReport r = layers::CheckNetwork(ci);
  for (const auto& f : r.findings)
    if (f.status == Status::kWarn || f.status == Status::kFail) CHECK(f.fix.has_value());
  return r;
}

}  // namespace

TEST_CASE("network layer for several nodes: each fault fails, the GPU-NIC distance stays a warning",
          "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  const std::string off = test::BridgeConfig(true, 0);
  in.host.gpus.resize(2);
  in.host.gpus[0].pci = "0000:03:00.0";
  in.host.gpus[1].index = 1;
  in.host.gpus[1].pci = "0000:83:00.0";
  in.host.nvidia_pci = {{"0000:03:00.0", "0x10de", "0x2330", "0x030200", "nvidia", 0, "", ""},
                        {"0000:83:00.0", "0x10de", "0x2330", "0x030200", "nvidia", 1, "", ""}};
  test::AddPciPath(t, {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, "0000:03:00.0", off, "0");
  test::AddPciPath(t, {"0000:80:01.0", "0000:81:00.0", "0000:82:00.0"}, "0000:83:00.0", off, "1");
  test::AddPciPath(t, {"0000:00:03.0"}, "0000:05:00.0", off, "0");
  test::AddPciPath(t, {"0000:00:04.0"}, "0000:06:00.0", off, "0");
  test::AddRdmaDevice(t, "mlx5_0", "0000:05:00.0", "mlx5_core", "0x15b3", RdmaPortSpec{});
  RdmaPortSpec down;
  down.state = "1: DOWN";
  down.phys_state = "3: Disabled";
  test::AddRdmaDevice(t, "mlx5_1", "0000:06:00.0", "mlx5_core", "0x15b3", down);
  test::AddPeermem(t);

  const LayerReport one = CheckNodes(t, in, 0);
  CHECK(one.status == Status::kWarn);
  CHECK(FindCode(one, "network.port-down")->status == Status::kWarn);

  const LayerReport two = CheckNodes(t, in, 2);
  CHECK(two.status == Status::kFail);
  CHECK(two.wanted == "RDMA ports active; GPUDirect RDMA (a job on 2 nodes)");
  REQUIRE(FindCode(two, "network.port-down"));
  CHECK(FindCode(two, "network.port-down")->status == Status::kFail);
  CHECK(FindCode(two, "network.port-down")->fix == FindCode(one, "network.port-down")->fix);
  REQUIRE(FindCode(two, "network.gpu-nic-far"));
  CHECK(FindCode(two, "network.gpu-nic-far")->status == Status::kWarn);
  CHECK(FindCode(two, "network.ports")->status == Status::kOk);
  CHECK(FindCode(two, "network.gdr")->status == Status::kOk);
  CHECK(two.findings.size() == one.findings.size());
  // --nodes 1 is one node: as without the flag.
  CHECK(CheckNodes(t, in, 1).status == Status::kWarn);
}

TEST_CASE("network layer for several nodes: RoCE without a v2 GID and GPUDirect RDMA off fail",
          "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  in.host.driver.module.loaded = true;
  in.host.driver.module.open = false;
  RdmaPortSpec roce;
  roce.link_layer = "Ethernet";
  roce.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:20:00.0", "mlx5_core", "0x15b3", roce);
  const LayerReport r = CheckNodes(t, in, 4);
  CHECK(r.status == Status::kFail);
  CHECK(FindCode(r, "network.roce-no-v2-gid")->status == Status::kFail);
  CHECK(FindCode(r, "network.gdr-off")->status == Status::kFail);
}

TEST_CASE("network layer for several nodes: without RDMA, TCP warns and no NIC fails", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  // No NIC at all: the nodes cannot reach each other.
  LayerReport none = CheckNodes(t, in, 2);
  REQUIRE(none.findings.size() == 1);
  CHECK(none.findings[0].code == "network.no-nic");
  CHECK(none.status == Status::kFail);
  CHECK(none.findings[0].message ==
        "no physical network device is up: a job on 2 nodes cannot reach the other nodes");
  // A NIC that is down, then one up (addresses unknown in a tree without /proc/net).
  test::AddNic(t, "eno2", "0000:c1:00.1", "-1", "down");
  CHECK(CheckNodes(t, in, 2).findings[0].code == "network.no-nic");
  test::AddNic(t, "eno1", "0000:c1:00.0", "25000");
  LayerReport tcp = CheckNodes(t, in, 2);
  REQUIRE(tcp.findings.size() == 1);
  CHECK(tcp.findings[0].code == "network.no-rdma");
  CHECK(tcp.status == Status::kWarn);
  CHECK(tcp.detail ==
        "no RDMA device: traffic between nodes goes over TCP at the NIC's speed: eno1 (25 Gb/s); a job on 2 "
        "nodes runs, far slower than over RDMA");
  CHECK(tcp.findings[0].fix->find("NCCL_SOCKET_IFNAME") != std::string::npos);
  // The same NIC with an address known to be absent (the tree's routes name another interface).
  test::WriteFile(t, "/proc/net/route",
                  "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                  "eno9\t0014A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0");
  LayerReport unaddressed = CheckNodes(t, in, 2);
  CHECK(unaddressed.findings[0].code == "network.no-nic");
  CHECK(unaddressed.findings[0].message.find(
            "no physical network device that is up has an IPv4 address: a job on 2 nodes") == 0);
  // One node: the one line, ok.
  CHECK(CheckNodes(t, in, 0).status == Status::kOk);
}

TEST_CASE("doctor: the network row is shown for several nodes on a host without RDMA or NICs",
          "[layers][network]") {
  test::Inputs in;
  in.host.network = {};
  auto names = [](const std::vector<LayerReport>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.name);
    return out;
  };
  layers::CheckInput ci = in.in();
  const auto single = names(layers::CheckAll(ci));
  CHECK(std::find(single.begin(), single.end(), "network") == single.end());
  ci.nodes = 2;
  const auto multi = names(layers::CheckAll(ci));
  CHECK(multi.back() == "network");
  CHECK(multi.size() == single.size() + 1);
}

TEST_CASE("doctor --nodes: a RoCE fault fails doctor for several nodes, not for one; bad values refused",
          "[layers][network][doctor]") {
  test::TempRoot t;
  std::filesystem::copy(
      std::string(GP_FIXTURES) + "/hosts/healthy-h100", t.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  RdmaPortSpec roce;
  roce.link_layer = "Ethernet";
  roce.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:0c:00.0", "mlx5_core", "0x15b3", roce);
  std::vector<std::string> args = {"--json", "--manifest", "ubuntu22.04-r535-cuda12.2",
                                   "doctor", "--root",     t.path()};
  test::CliRun one = test::Gpuprep(args);
  CHECK(nlohmann::json::parse(one.out)["layers"].back()["status"] == "warn");
  args.insert(args.end(), {"--nodes", "2"});
  test::CliRun two = test::Gpuprep(args);
  CHECK(two.code == 1);
  const auto last = nlohmann::json::parse(two.out)["layers"].back();
  CHECK(last["name"] == "network");
  CHECK(last["status"] == "fail");
  CHECK(one.code != 1);  // the fixture passes doctor as one node

  // A stack for jobs on several nodes (workload.nodes) judges the network as --nodes does; --nodes 1 wins.
  const std::string stack = t.path() + "/two-nodes.yaml";
  std::ofstream(stack) << "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
                          "metadata: {name: two-nodes}\nworkload: {nodes: 2}\n";
  test::CliRun site = test::Gpuprep({"--json", "--manifest", stack, "doctor", "--root", t.path()});
  INFO(site.err);
  CHECK(site.code == 1);
  CHECK(nlohmann::json::parse(site.out)["layers"].back()["status"] == "fail");
  CHECK(nlohmann::json::parse(site.out)["layers"].back()["wanted"].get<std::string>().find(
            "(a job on 2 nodes)") != std::string::npos);
  test::CliRun single =
      test::Gpuprep({"--json", "--manifest", stack, "doctor", "--root", t.path(), "--nodes", "1"});
  CHECK(nlohmann::json::parse(single.out)["layers"].back()["status"] == "warn");
  std::ofstream(stack) << "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
                          "metadata: {name: two-nodes}\nworkload: {nodes: 0}\n";
  test::CliRun zero = test::Gpuprep({"--manifest", stack, "doctor", "--root", t.path()});
  CHECK(zero.code == 2);
  CHECK(zero.err ==
        "gpuprep: error: " + stack + ":5:19: workload.nodes: must be a whole number from 1 to 100000\n");

  for (const char* bad : {"0", "-3", "100001"}) {
    test::CliRun r = test::Gpuprep({"doctor", "--root", t.path(), "--nodes", bad});
    CHECK(r.code == 2);
    CHECK(r.err.find("--nodes") != std::string::npos);
    CHECK(r.out.empty());
  }
  test::CliRun health = test::Gpuprep({"doctor", "--health", "--root", t.path(), "--nodes", "2"});
  CHECK(health.code == 2);
  CHECK(health.err.find("--nodes: the health checks judge no network") != std::string::npos);
}
