// The network layer over probed sysfs trees (tests/support/rdma_trees.h) and the healthy H100 sample host:
// shown only with RDMA devices, a fix on every warning, never a failure (doctor does not know whether the
// host runs multi-node jobs), GPUDirect RDMA judged as NCCL judges it.
#include <catch2/catch.hpp>
#include <filesystem>
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

const Finding* Find(const LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

LayerReport Check(test::TempRoot& t, test::Inputs& in) {
  probe::ProbeEnv env;
  env.fs = &t.fs();
  env.compat = &manifest::EmbeddedCompat();
  in.host.network = {};
  probe::ProbeNetwork(env, in.host);
  LayerReport r = layers::CheckNetwork(in.in());
  for (const auto& f : r.findings) {
    CHECK(f.status != Status::kFail);  // at most a warning
    if (f.status == Status::kWarn) CHECK(f.fix.has_value());
    CHECK(f.code.rfind("network.", 0) == 0);
  }
  return r;
}

}  // namespace

TEST_CASE("network layer: shown only on hosts with RDMA devices", "[layers][network]") {
  test::Inputs in;
  const layers::Layer* row = layers::FindLayer("network");
  REQUIRE(row);
  CHECK_FALSE(row->shown(in.host));
  CHECK(row->plan == nullptr);
  in.host.network.rdma.push_back({});
  CHECK(row->shown(in.host));
  in.host.network = {};
  LayerReport none = layers::CheckNetwork(in.in());
  CHECK(none.status == Status::kOk);
  CHECK(none.detail == "no RDMA device: traffic between nodes goes over TCP at the NIC's speed");
}

TEST_CASE("network layer: a healthy NDR InfiniBand host with peermem", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  for (int i = 0; i < 4; ++i)
    test::AddRdmaDevice(t, "mlx5_" + std::to_string(i), "0000:2" + std::to_string(i) + ":00.0", "mlx5_core",
                        "0x15b3", RdmaPortSpec{});
  test::AddPeermem(t);
  LayerReport r = Check(t, in);
  CHECK(r.status == Status::kOk);
  CHECK(r.found == std::optional<std::string>("4 InfiniBand ports (400 Gb/sec (4X NDR))"));
  REQUIRE(Find(r, "network.ports"));
  CHECK(Find(r, "network.ports")->message == "4 of 4 RDMA ports active");
  CHECK(Find(r, "network.gdr"));
}

TEST_CASE("network layer: a port down, an IB port without a subnet manager", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  RdmaPortSpec down;
  down.state = "1: DOWN";
  down.phys_state = "2: Polling";
  test::AddRdmaDevice(t, "mlx5_0", "0000:20:00.0", "mlx5_core", "0x15b3", down);
  RdmaPortSpec init;
  init.state = "2: INIT";
  test::AddRdmaDevice(t, "mlx5_1", "0000:21:00.0", "mlx5_core", "0x15b3", init);
  test::AddRdmaDevice(t, "mlx5_2", "0000:22:00.0", "mlx5_core", "0x15b3", RdmaPortSpec{});
  test::AddPeermem(t);
  LayerReport r = Check(t, in);
  CHECK(r.status == Status::kWarn);
  REQUIRE(r.findings.size() >= 2);
  CHECK(r.findings[0].message == "mlx5_0 port 1 is DOWN (physical state Polling): NCCL does not use it");
  CHECK(r.findings[0].fix->find("check the cable of mlx5_0 port 1") == 0);
  CHECK(r.findings[1].fix->find("no subnet manager") != std::string::npos);
  REQUIRE(Find(r, "network.ports"));
  CHECK(Find(r, "network.ports")->message == "1 of 3 RDMA ports active");
}

TEST_CASE("network layer: RoCE without a RoCE v2 GID, its device down; GPUDirect RDMA off",
          "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  in.host.driver.module.loaded = true;
  in.host.driver.module.open = false;
  RdmaPortSpec good;
  good.link_layer = "Ethernet";
  good.roce_v2_gid = true;
  good.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:20:00.0", "mlx5_core", "0x15b3", good);
  RdmaPortSpec bad = good;
  bad.roce_v2_gid = false;
  bad.netdev = "ens8f1np1";
  bad.operstate = "lowerlayerdown";
  test::AddRdmaDevice(t, "mlx5_1", "0000:20:00.1", "mlx5_core", "0x15b3", bad);
  LayerReport r = Check(t, in);
  CHECK(r.status == Status::kWarn);
  const Finding* gid = Find(r, "network.roce-no-v2-gid");
  REQUIRE(gid);
  CHECK(gid->message.find("mlx5_1 port 1 (RoCE)") == 0);
  CHECK(gid->fix->find("give ens8f1np1 an IPv4 address") == 0);
  const Finding* nd = Find(r, "network.netdev-down");
  REQUIRE(nd);
  CHECK(*nd->fix == "sudo ip link set ens8f1np1 up");
  const Finding* gdr = Find(r, "network.gdr-off");
  REQUIRE(gdr);
  CHECK(gdr->fix->find("sudo modprobe nvidia-peermem") == 0);
  CHECK(r.found == std::optional<std::string>("2 RoCE ports (400 Gb/sec (4X NDR))"));
}

TEST_CASE("network layer: DMA-BUF on the open modules; no judgement without the module",
          "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  test::AddRdmaDevice(t, "mlx5_0", "0000:20:00.0", "mlx5_core", "0x15b3", RdmaPortSpec{});
  in.host.driver.module.loaded = true;
  in.host.driver.module.open = true;
  CHECK(Find(Check(t, in), "network.gdr-dmabuf"));
  in.host.driver.module.loaded = false;
  CHECK(Find(Check(t, in), "network.gdr-not-judged")->status == Status::kSkip);
}

TEST_CASE("network layer: AWS EFA devices name the plugin the image needs", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  RdmaPortSpec efa;
  efa.link_layer = "Unspecified";
  for (int i = 0; i < 2; ++i)
    test::AddRdmaDevice(t, "rdmap" + std::to_string(16 + i) + "s27",
                        "0000:1" + std::to_string(6 + i) + ":1b.0", "efa", "0x1d0f", efa);
  LayerReport r = Check(t, in);
  CHECK(r.status == Status::kOk);
  CHECK(r.found == std::optional<std::string>("2 EFA devices"));
  REQUIRE(Find(r, "network.efa"));
  CHECK(Find(r, "network.efa")->message.find("aws-ofi-nccl") != std::string::npos);
  CHECK_FALSE(Find(r, "network.gdr-off"));  // EFA's GPUDirect path is the plugin's, not peermem's
}

TEST_CASE("doctor --root: the network row on a fixture host with RoCE added; the exit code stays",
          "[layers][network][doctor]") {
  test::TempRoot t;
  std::filesystem::copy(
      std::string(GP_FIXTURES) + "/hosts/healthy-h100", t.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  const std::vector<std::string> args = {"--json", "--manifest", "ubuntu22.04-r535-cuda12.2",
                                         "doctor", "--root",     t.path()};
  test::CliRun before = test::Gpuprep(args);
  CHECK(before.out.find("\"network\"") == std::string::npos);
  RdmaPortSpec roce;
  roce.link_layer = "Ethernet";
  roce.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:0c:00.0", "mlx5_core", "0x15b3", roce);  // the tree's ConnectX
  test::CliRun after = test::Gpuprep(args);
  CHECK(after.code == before.code);
  auto doc = nlohmann::json::parse(after.out);
  const auto& last = doc["layers"].back();
  CHECK(last["name"] == "network");
  CHECK(last["status"] == "warn");
  CHECK(last["findings"][0]["code"] == "network.roce-no-v2-gid");
  CHECK(doc["host"]["network"]["rdma"][0]["name"] == "mlx5_0");
}
