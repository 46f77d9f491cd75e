// The network probe step over sysfs trees of RDMA hosts (tests/support/rdma_trees.h names the shapes'
// sources): InfiniBand HDR and NDR, RoCE with and without a RoCE v2 GID, EFA, a port down, the peer-memory
// module present and absent; and the host JSON written and read back.
#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "probe/host_json.h"
#include "probe/probe.h"
#include "probe/steps.h"
#include "support/rdma_trees.h"

using namespace gp;
using test::RdmaPortSpec;

namespace {

probe::HostFacts ProbeNet(test::TempRoot& t) {
  probe::ProbeEnv env;
  env.fs = &t.fs();
  env.compat = &manifest::EmbeddedCompat();
  probe::HostFacts h;
  probe::ProbeNetwork(env, h);
  return h;
}

}  // namespace

TEST_CASE("network probe: InfiniBand NDR and HDR ports, peermem loaded", "[probe][network]") {
  test::TempRoot t;
  RdmaPortSpec ndr;
  ndr.netdev = "ibp26s0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:1a:00.0", "mlx5_core", "0x15b3", ndr);
  RdmaPortSpec hdr;
  hdr.rate = "200 Gb/sec (4X HDR)";
  test::AddRdmaDevice(t, "mlx5_1", "0000:3a:00.0", "mlx5_core", "0x15b3", hdr);
  test::AddPeermem(t);
  probe::HostFacts h = ProbeNet(t);
  REQUIRE(h.network.rdma.size() == 2);
  const auto& d = h.network.rdma[0];
  CHECK(d.name == "mlx5_0");
  CHECK(d.pci == "0000:1a:00.0");
  CHECK(d.driver == "mlx5_core");
  CHECK_FALSE(d.efa);
  REQUIRE(d.ports.size() == 1);
  CHECK(d.ports[0].number == 1);
  CHECK(d.ports[0].state == "ACTIVE");
  CHECK(d.ports[0].phys_state == "LinkUp");
  CHECK(d.ports[0].link_layer == "InfiniBand");
  CHECK(d.ports[0].rate == "400 Gb/sec (4X NDR)");
  CHECK(d.ports[0].netdev == "ibp26s0");
  CHECK(d.ports[0].netdev_state == "up");
  CHECK_FALSE(d.ports[0].roce_v2_ipv4);
  CHECK(h.network.rdma[1].ports[0].rate == "200 Gb/sec (4X HDR)");
  CHECK(h.network.rdma[1].ports[0].netdev.empty());
  CHECK(h.network.peermem);
  CHECK(h.network.peermem_path == "/sys/module/nvidia_peermem/version");
}

TEST_CASE("network probe: RoCE with and without an IPv4 RoCE v2 GID; EFA; a port down", "[probe][network]") {
  test::TempRoot t;
  RdmaPortSpec v2;
  v2.link_layer = "Ethernet";
  v2.rate = "200 Gb/sec (4X HDR)";
  v2.roce_v2_gid = true;
  v2.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:1a:00.0", "mlx5_core", "0x15b3", v2);
  RdmaPortSpec v1 = v2;
  v1.roce_v2_gid = false;
  v1.netdev = "ens8f1np1";
  v1.operstate = "down";
  v1.state = "1: DOWN";
  v1.phys_state = "3: Disabled";
  test::AddRdmaDevice(t, "mlx5_1", "0000:1a:00.1", "mlx5_core", "0x15b3", v1);
  RdmaPortSpec efa;
  efa.link_layer = "Unspecified";
  efa.rate = "100 Gb/sec (4X EDR)";
  test::AddRdmaDevice(t, "rdmap16s27", "0000:10:1b.0", "efa", "0x1d0f", efa);
  probe::HostFacts h = ProbeNet(t);
  REQUIRE(h.network.rdma.size() == 3);
  CHECK(h.network.rdma[0].ports[0].roce_v2_ipv4);
  CHECK(h.network.rdma[0].ports[0].netdev == "ens8f0np0");  // from the GID's ndevs entry
  CHECK_FALSE(h.network.rdma[1].ports[0].roce_v2_ipv4);     // a RoCE v2 GID, but link-local only
  CHECK(h.network.rdma[1].ports[0].state == "DOWN");
  CHECK(h.network.rdma[1].ports[0].phys_state == "Disabled");
  CHECK(h.network.rdma[1].ports[0].netdev_state == "down");
  CHECK(h.network.rdma[2].efa);
  CHECK(h.network.rdma[2].driver == "efa");
  CHECK_FALSE(h.network.peermem);
  CHECK(h.network.peermem_path.empty());
}

TEST_CASE("network probe: no RDMA device; hostile names are not followed", "[probe][network]") {
  test::TempRoot t;
  CHECK(ProbeNet(t).network.rdma.empty());
  test::WriteFile(t, "/sys/class/infiniband/bad name/ports/1/state", "4: ACTIVE");
  test::WriteFile(t, "/sys/class/infiniband/mlx5_9/ports/x/state", "4: ACTIVE");
  test::WriteFile(t, "/sys/class/infiniband/mlx5_9/ports/1/state", "4: ACT\x1bIVE");
  probe::HostFacts h = ProbeNet(t);
  REQUIRE(h.network.rdma.size() == 1);
  CHECK(h.network.rdma[0].name == "mlx5_9");
  REQUIRE(h.network.rdma[0].ports.size() == 1);
  CHECK(h.network.rdma[0].ports[0].state == "ACT?IVE");
  CHECK(h.network.rdma[0].pci.empty());
}

TEST_CASE("network: the host JSON carries it only with RDMA devices, and reads it back", "[probe][network]") {
  test::TempRoot t;
  RdmaPortSpec v2;
  v2.link_layer = "Ethernet";
  v2.roce_v2_gid = true;
  v2.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:1a:00.0", "mlx5_core", "0x15b3", v2);
  test::AddPeermem(t);
  probe::HostFacts h = ProbeNet(t);
  auto j = probe::HostToJson(h);
  REQUIRE(j.contains("network"));
  probe::HostFacts back = probe::HostFromJson(j, "snap.json");
  REQUIRE(back.network.rdma.size() == 1);
  CHECK(back.network.rdma[0].ports[0].netdev == "ens8f0np0");
  CHECK(back.network.rdma[0].ports[0].roce_v2_ipv4);
  CHECK(back.network.peermem);
  CHECK_FALSE(probe::HostToJson(probe::HostFacts{}).contains("network"));
  j["network"]["rdma"][0]["ports"][0]["netdev"] = "eth0; rm -rf /";
  CHECK_THROWS(probe::HostFromJson(j, "snap.json"));
}
