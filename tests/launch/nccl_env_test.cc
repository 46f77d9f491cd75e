// NCCL's environment in a launch for several nodes (launch/nccl_env.h): NCCL_SOCKET_IFNAME from the route
// toward MASTER_ADDR or the exclusion form with a note, NCCL_IB_HCA in NCCL's exact form, the GID note for
// NCCL older than 2.21, a user's own value kept with a note; the RDMA devices and IPC_LOCK in the container.
// The hidden [.netns-route] case runs in the network namespace tests/integration/launch_netns.sh builds.
#include "launch/nccl_env.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "support/launch_support.h"

using namespace gp;
using gp::test::Gpuprep;
using gp::test::kH100x2;
using gp::test::kImage;
using nlohmann::json;

namespace {

probe::RdmaDevice Dev(const std::string& name, const std::string& link, const std::string& state,
                      bool v2 = false) {
  probe::RdmaDevice d;
  d.name = name;
  probe::RdmaPort p;
  p.number = 1;
  p.state = state;
  p.link_layer = link;
  p.roce_v2_ipv4 = v2;
  d.ports.push_back(p);
  return d;
}

bool Has(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

std::string Env(const launch::RunConfig& c, const std::string& k) {
  for (const auto& [n, v] : c.env)
    if (n == k) return v;
  return "";
}

launch::RunConfig TwoNodes() {
  launch::RunConfig c;
  c.multi.nodes = 2;
  c.multi.master_addr = "10.2.0.1";
  return c;
}

// kH100x2 with `network` added to its host: a snapshot of an RDMA node.
std::string RdmaSnapshot(const json& network) {
  std::ifstream in(kH100x2);
  json doc = json::parse(in);
  doc["host"]["network"] = network;
  const std::string path = gp::test::TempDir() + "/rdma-node.json";
  std::ofstream(path) << doc.dump();
  return path;
}

const json kFourIb = {
    {"rdma",
     json::array({{{"name", "mlx5_0"},
                   {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "InfiniBand"}}}}},
                  {{"name", "mlx5_1"},
                   {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "InfiniBand"}}}}},
                  {{"name", "mlx5_10"},
                   {"ports", {{{"number", 1}, {"state", "DOWN"}, {"link_layer", "InfiniBand"}}}}},
                  {{"name", "mlx5_11"},
                   {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "InfiniBand"}}}}}})}};

}  // namespace

TEST_CASE("nccl env: NCCL_IB_HCA names each usable port exactly", "[launch]") {
  probe::NetworkInfo n;
  CHECK(launch::IbHcaValue(n).empty());
  n.rdma = {Dev("mlx5_0", "InfiniBand", "ACTIVE"), Dev("mlx5_1", "InfiniBand", "DOWN"),
            Dev("mlx5_10", "InfiniBand", "ACTIVE"), Dev("mlx5_2", "Ethernet", "ACTIVE", true),
            Dev("mlx5_3", "Ethernet", "ACTIVE", false)};
  probe::RdmaDevice efa = Dev("rdmap16s27", "Unspecified", "ACTIVE");
  efa.efa = true;
  n.rdma.push_back(efa);
  // mlx5_1 is down: a plain "mlx5_1" would still select mlx5_10; the exact form names what is usable. A RoCE
  // port without a RoCE v2 IPv4 GID and an EFA device are not NCCL's IB transport here.
  CHECK(launch::IbHcaValue(n) == "=mlx5_0:1,mlx5_10:1,mlx5_2:1");
}

TEST_CASE("nccl env: the interface NCCL picks itself", "[launch]") {
  CHECK(launch::NcclOwnInterface({}).empty());
  CHECK(launch::NcclOwnInterface({"lo", "docker0", "eno1", "ib0"}) == "ib0");
  CHECK(launch::NcclOwnInterface({"lo", "docker0", "virbr0", "eno1", "ens8"}) == "eno1");
  CHECK(launch::NcclOwnInterface({"lo", "docker0"}) == "docker0");
  CHECK(launch::NcclOwnInterface({"lo"}) == "lo");
}

TEST_CASE("nccl env: the routed interface exactly, the exclusion form without it, the user's value kept",
          "[launch]") {
  probe::HostFacts h;
  launch::LocalNet route;
  route.measured = true;
  route.route_ifname = "fabric0";
  route.v4_order = {"lo", "mgmt0", "fabric0"};
  launch::RunConfig c = TwoNodes();
  launch::AddNcclEnv(h, route, std::nullopt, c);
  CHECK(Env(c, "NCCL_SOCKET_IFNAME") == "=fabric0");
  CHECK(c.origins["env.NCCL_SOCKET_IFNAME"] == launch::Origin::kHost);
  CHECK(Env(c, "NCCL_IB_HCA").empty());  // no RDMA device
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] ==
        "NCCL_SOCKET_IFNAME==fabric0: this host routes 10.2.0.1 through fabric0; without it NCCL would take "
        "mgmt0 (it prefers interfaces starting with ib, then any but docker and lo)");

  launch::RunConfig same = TwoNodes();
  route.v4_order = {"lo", "fabric0", "mgmt0"};
  launch::AddNcclEnv(h, route, std::nullopt, same);
  CHECK(same.warnings.empty());  // NCCL would pick the same one

  launch::RunConfig unknown = TwoNodes();
  launch::LocalNet none;
  none.why_not = "MASTER_ADDR is a name, which launch does not resolve";
  launch::AddNcclEnv(h, none, std::nullopt, unknown);
  CHECK(Env(unknown, "NCCL_SOCKET_IFNAME") == "^docker,lo");
  CHECK(unknown.origins["env.NCCL_SOCKET_IFNAME"] == launch::Origin::kDefault);
  REQUIRE(unknown.warnings.size() == 1);
  CHECK(unknown.warnings[0].find("NCCL_SOCKET_IFNAME=^docker,lo: the interface toward 10.2.0.1 is not known "
                                 "(MASTER_ADDR is a name, which launch does not resolve)") == 0);

  launch::RunConfig user = TwoNodes();
  user.env = {{"NCCL_SOCKET_IFNAME", "eth"}, {"NCCL_IB_HCA", "mlx5"}};
  user.origins["env.NCCL_SOCKET_IFNAME"] = launch::Origin::kFlag;
  user.origins["env.NCCL_IB_HCA"] = launch::Origin::kProfile;
  h.network.rdma = {Dev("mlx5_0", "InfiniBand", "ACTIVE")};
  launch::AddNcclEnv(h, route, std::nullopt, user);
  CHECK(user.env.size() == 2);
  CHECK(Env(user, "NCCL_SOCKET_IFNAME") == "eth");
  CHECK(Env(user, "NCCL_IB_HCA") == "mlx5");
  CHECK(Has(user.warnings,
            "NCCL_SOCKET_IFNAME=eth from -e is kept; gpuprep would set =fabric0 (this host routes 10.2.0.1 "
            "through fabric0)"));
  CHECK(Has(user.warnings, "NCCL_IB_HCA=mlx5 from the profile is kept; gpuprep would set =mlx5_0:1"));
}

TEST_CASE("nccl env: NCCL_IB_GID_INDEX is left to NCCL from 2.21; older NCCL on RoCE gets a note",
          "[launch]") {
  probe::HostFacts h;
  h.network.rdma = {Dev("mlx5_0", "Ethernet", "ACTIVE", true)};
  launch::LocalNet none;
  launch::RunConfig old = TwoNodes();
  launch::AddNcclEnv(h, none, Version::Must("2.18.3"), old);
  CHECK(Env(old, "NCCL_IB_HCA") == "=mlx5_0:1");
  CHECK(Env(old, "NCCL_IB_GID_INDEX").empty());
  CHECK(Has(old.warnings, "NCCL 2.18.3 is older than 2.21 and does not choose the RoCE v2 GID itself"));
  for (const char* v : {"2.21.5", "2.27.3"}) {
    launch::RunConfig c = TwoNodes();
    launch::AddNcclEnv(h, none, Version::Must(v), c);
    CHECK_FALSE(Has(c.warnings, "NCCL_IB_GID_INDEX"));
  }
}

TEST_CASE("launch --nodes 2 from an InfiniBand node's snapshot: exact HCAs, the RDMA devices, IPC_LOCK",
          "[launch]") {
  const std::string snap = RdmaSnapshot(kFourIb);
  auto r = Gpuprep({"launch", "--format", "json", "--host", snap, "--image", kImage, "--nodes", "2",
                    "--node-rank", "1", "--master", "10.2.0.1:29500", "--", "python", "train.py"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json doc = json::parse(r.out);
  json env = json::object();
  for (const auto& e : doc["config"]["env"]) env[e["name"].get<std::string>()] = e["value"];
  CHECK(env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_11:1");
  CHECK(doc["origins"]["env.NCCL_IB_HCA"] == "host");
  CHECK(env["NCCL_SOCKET_IFNAME"] == "^docker,lo");  // a snapshot's routes are not known
  CHECK(doc["origins"]["env.NCCL_SOCKET_IFNAME"] == "default");
  CHECK(doc["config"]["devices"] == json::array({"/dev/infiniband"}));
  CHECK(doc["config"]["cap_add"] == json::array({"IPC_LOCK"}));
  CHECK(
      r.err.find("NCCL_SOCKET_IFNAME=^docker,lo: the interface toward 10.2.0.1 is not known (the host comes "
                 "from a snapshot, whose routes are not known)") != std::string::npos);
  const std::string argv = doc["docker_argv"].dump();
  CHECK(argv.find("\"--device\",\"/dev/infiniband\",\"--cap-add\",\"IPC_LOCK\"") != std::string::npos);

  // One node: none of it.
  auto one = Gpuprep({"launch", "--format", "json", "--host", snap, "--image", kImage});
  REQUIRE(one.code == 0);
  const json single = json::parse(one.out);
  CHECK(single["config"]["devices"].empty());
  CHECK(single["config"]["env"].dump().find("NCCL_") == std::string::npos);

  // The user's -e wins, with a note; compose carries the devices too.
  auto mine = Gpuprep({"launch", "--format", "compose", "--host", snap, "--image", kImage, "--nodes", "2",
                       "--node-rank", "0", "--master", "10.2.0.1:29500", "-e", "NCCL_IB_HCA=mlx5_0"});
  REQUIRE(mine.code == 0);
  CHECK(mine.out.find("NCCL_IB_HCA: \"mlx5_0\"") != std::string::npos);
  CHECK(mine.out.find("devices:\n      - \"/dev/infiniband:/dev/infiniband\"\n    cap_add:\n      - "
                      "\"IPC_LOCK\"") != std::string::npos);
  CHECK(mine.err.find("NCCL_IB_HCA=mlx5_0 from -e is kept; gpuprep would set =mlx5_0:1,mlx5_1:1,mlx5_11:1") !=
        std::string::npos);
}

TEST_CASE("nccl env: the route read in a network namespace with two subnets and a docker0",
          "[.netns-route]") {
  // tests/integration/launch_netns.sh: lo; docker0 172.17.0.1/16; mgmt0 10.1.0.2/24 with the default
  // route via 10.1.0.1; fabric0 10.2.0.2/24 (created in that order).
  REQUIRE(std::getenv("GP_NETNS_ROUTE") != nullptr);
  const launch::LocalNet peer = launch::ReadLocalNet("10.2.0.1");
  CHECK(peer.why_not.empty());
  CHECK(peer.route_ifname == "fabric0");
  CHECK(launch::NcclOwnInterface(peer.v4_order) == "mgmt0");       // NCCL alone would take the wrong one
  const launch::LocalNet self = launch::ReadLocalNet("10.2.0.2");  // the master node itself
  CHECK(self.route_ifname == "fabric0");
  CHECK(launch::ReadLocalNet("203.0.113.9").route_ifname == "mgmt0");  // the default route
  CHECK(launch::ReadLocalNet("[::1]").why_not == "::1 is this host's loopback");
  CHECK(launch::ReadLocalNet("127.0.0.1").why_not == "127.0.0.1 is this host's loopback");
  CHECK(launch::ReadLocalNet("master.example").why_not ==
        "MASTER_ADDR is a name, which launch does not resolve");
  // What gpuprep chose and what it says NCCL would take alone, for the script to compare with NCCL's own
  // bootstrap in this namespace.
  if (const char* out = std::getenv("GP_NETNS_OUT"))
    std::ofstream(out) << "route=" << peer.route_ifname << "\nown=" << launch::NcclOwnInterface(peer.v4_order)
                       << "\n";
}
