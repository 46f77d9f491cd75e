// NCCL's environment in a launch for several nodes (launch/nccl_env.h): NCCL_SOCKET_IFNAME from the route
// toward MASTER_ADDR or the exclusion form with a note, NCCL_IB_HCA in NCCL's exact form, the GID note for
// NCCL older than 2.21, NCCL_NET pinned to the node's transport (IB, Socket, aws-ofi-nccl on EFA), a user's
// own value kept with a note; the RDMA devices and IPC_LOCK in the container; the same environment in the
// Slurm script, and a Kubernetes Indexed Job with the RDMA resource for several nodes. The hidden
// [.netns-route] case runs in the network namespace tests/integration/launch_netns.sh builds.
#include "launch/nccl_env.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "launch/validate.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"

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

// kH100x2 with `network` added to its host: a snapshot of an RDMA node, written in `dir`; its path.
std::string RdmaSnapshot(const gp::test::TempDir& dir, const json& network) {
  std::ifstream in(kH100x2);
  json doc = json::parse(in);
  doc["host"]["network"] = network;
  return dir.Write("rdma-node.json", doc.dump());
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
  CHECK(user.env.size() == 3);  // and gpuprep's NCCL_NET
  CHECK(Env(user, "NCCL_NET") == "IB");
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
  const gp::test::TempDir tmp;
  const std::string snap = RdmaSnapshot(tmp, kFourIb);
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

TEST_CASE("nccl env: NCCL_NET pinned to the transport this node has", "[launch]") {
  probe::NetworkInfo n;
  CHECK(launch::NcclNetValue(n).value == "Socket");
  n.rdma = {Dev("mlx5_0", "InfiniBand", "DOWN")};
  CHECK(launch::NcclNetValue(n).value == "Socket");  // a device, but no usable port
  n.rdma = {Dev("mlx5_0", "Ethernet", "ACTIVE", false)};
  CHECK(launch::NcclNetValue(n).value == "Socket");  // RoCE without a RoCE v2 IPv4 GID
  n.rdma = {Dev("mlx5_0", "Ethernet", "ACTIVE", true)};
  CHECK(launch::NcclNetValue(n).value == "IB");  // RoCE is NCCL's IB transport too
  n.rdma = {Dev("mlx5_0", "InfiniBand", "ACTIVE")};
  CHECK(launch::NcclNetValue(n).value == "IB");
  probe::RdmaDevice efa = Dev("rdmap16s27", "Unspecified", "ACTIVE");
  efa.efa = true;
  n.rdma = {efa};
  CHECK(launch::NcclNetValue(n).value == "AWS Libfabric");
  n.rdma[0].ports[0].state = "DOWN";
  CHECK(launch::NcclNetValue(n).value == "Socket");
}

TEST_CASE("nccl env: NCCL_NET's origin, the user's value kept, the notes for Socket and EFA", "[launch]") {
  probe::HostFacts h;
  launch::LocalNet none;
  launch::RunConfig plain = TwoNodes();
  launch::AddNcclEnv(h, none, std::nullopt, plain);
  CHECK(Env(plain, "NCCL_NET") == "Socket");
  CHECK(plain.origins["env.NCCL_NET"] == launch::Origin::kHost);
  CHECK_FALSE(Has(plain.warnings, "NCCL_NET"));  // no RDMA device: nothing to say

  h.network.rdma = {Dev("mlx5_0", "InfiniBand", "DOWN")};
  launch::RunConfig down = TwoNodes();
  launch::AddNcclEnv(h, none, std::nullopt, down);
  CHECK(Env(down, "NCCL_NET") == "Socket");
  CHECK(Has(down.warnings, "NCCL_NET=Socket: this node has RDMA devices but no ACTIVE port NCCL can use"));

  h.network.rdma = {Dev("mlx5_0", "InfiniBand", "ACTIVE")};
  launch::RunConfig user = TwoNodes();
  user.env = {{"NCCL_NET", "Socket"}};
  user.origins["env.NCCL_NET"] = launch::Origin::kFlag;
  launch::AddNcclEnv(h, none, std::nullopt, user);
  CHECK(Env(user, "NCCL_NET") == "Socket");
  CHECK(Has(user.warnings,
            "NCCL_NET=Socket from -e is kept; gpuprep would set IB (this node has ACTIVE "
            "RDMA ports NCCL's IB transport uses)"));

  probe::RdmaDevice efa = Dev("rdmap16s27", "Unspecified", "ACTIVE");
  efa.efa = true;
  h.network.rdma = {efa};
  launch::RunConfig aws = TwoNodes();
  launch::AddNcclEnv(h, none, std::nullopt, aws);
  CHECK(Env(aws, "NCCL_NET") == "AWS Libfabric");
  CHECK(Env(aws, "NCCL_IB_HCA").empty());
  for (const char* fi : {"FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA", "NCCL_PROTO"}) CHECK(Env(aws, fi).empty());
  CHECK(Has(aws.warnings,
            "EFA: the image's aws-ofi-nccl version is not known, so no libfabric variable is "
            "set. From aws-ofi-nccl 1.7.0 with libfabric 1.18.0 none is needed"));
}

TEST_CASE("launch slurm --nodes 2: NCCL's environment exported and handed to the container", "[launch]") {
  const gp::test::TempDir tmp;
  const std::string snap = RdmaSnapshot(tmp, kFourIb);
  auto r = Gpuprep({"launch", "--format", "slurm", "--host", snap, "--image", kImage, "--nodes", "2", "--",
                    "python", "train.py"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("export NCCL_SOCKET_IFNAME='^docker,lo'\nexport NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_11:1\n"
                   "export NCCL_NET=IB\n") != std::string::npos);
  CHECK(r.out.find("--container-env=NCCL_SOCKET_IFNAME,NCCL_IB_HCA,NCCL_NET") != std::string::npos);
  CHECK(r.err.find("NCCL_SOCKET_IFNAME=^docker,lo: the interface toward the allocation's first node is not "
                   "known (every node gets the same script)") != std::string::npos);
  CHECK(r.err.find("the Slurm script gives every node the NCCL_NET and NCCL_IB_HCA of the host in") !=
        std::string::npos);
  // One node: no NCCL variable.
  auto one =
      Gpuprep({"launch", "--format", "slurm", "--host", snap, "--image", kImage, "--", "python", "t.py"});
  REQUIRE(one.code == 0);
  CHECK(one.out.find("NCCL_") == std::string::npos);
}

TEST_CASE("launch k8s --nodes 2: an Indexed Job on the host network with the RDMA resource", "[launch]") {
  const gp::test::TempDir tmp;
  const std::string snap = RdmaSnapshot(tmp, kFourIb);
  const std::vector<std::string> base = {"launch", "--format", "k8s",           "--host",
                                         snap,     "--image",  kImage,          "--nodes",
                                         "2",      "--master", "10.2.0.1:29500"};
  auto run = [&base](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return Gpuprep(args);
  };
  auto r = run({"--", "python", "train.py"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  YAML::Node job = YAML::Load(r.out);
  CHECK(job["spec"]["completions"].as<int>() == 2);
  CHECK(job["spec"]["parallelism"].as<int>() == 2);
  CHECK(job["spec"]["completionMode"].as<std::string>() == "Indexed");
  YAML::Node pod = job["spec"]["template"]["spec"];
  CHECK(pod["hostNetwork"].as<bool>());
  CHECK(pod["dnsPolicy"].as<std::string>() == "ClusterFirstWithHostNet");
  YAML::Node c = pod["containers"][0];
  CHECK(c["resources"]["limits"]["rdma/rdma_shared_device_a"].as<int>() == 1);
  CHECK(c["securityContext"]["capabilities"]["add"][0].as<std::string>() == "IPC_LOCK");
  std::map<std::string, YAML::Node> env;
  for (YAML::const_iterator e = c["env"].begin(); e != c["env"].end(); ++e)
    env.emplace((*e)["name"].as<std::string>(), static_cast<const YAML::Node&>(*e));
  CHECK(env["NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() ==
        "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  CHECK(!env["NODE_RANK"]["value"]);
  CHECK(env["NCCL_NET"]["value"].as<std::string>() == "IB");
  CHECK(env["NCCL_IB_HCA"]["value"].as<std::string>() == "=mlx5_0:1,mlx5_1:1,mlx5_11:1");
  CHECK(env["MASTER_ADDR"]["value"].as<std::string>() == "10.2.0.1");

  // The flag names another device plugin's resource, or none.
  YAML::Node other = YAML::Load(run({"--rdma-resource", "nvidia.com/hostdev"}).out);
  YAML::Node limits = other["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  CHECK(limits["nvidia.com/hostdev"].as<int>() == 1);
  CHECK(!limits["rdma/rdma_shared_device_a"]);
  YAML::Node bare = YAML::Load(run({"--rdma-resource", "none"}).out);
  CHECK(bare["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"].size() == 1);

  // Hostile names: one line naming the flag, exit 2, nothing printed.
  for (const std::string& bad : std::vector<std::string>{
           "rdma", "/x", "rdma/", "RDMA/x", "a/b/c", "rdma/-x", "kubernetes.io/x", "x.kubernetes.io/y",
           "rdma/x\ny", "rdma/" + std::string(64, 'a'), "rdma/x: 1\n  evil", "rdma/\xe2\x80\xae"}) {
    auto b = run({"--rdma-resource", bad});
    CHECK(b.code == 2);
    CHECK(b.out.empty());
    CHECK(b.err.rfind("gpuprep: error: --rdma-resource: ", 0) == 0);
    CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
  }
  CHECK(launch::ValidExtendedResourceName("vpc.amazonaws.com/efa"));
  CHECK(launch::ValidExtendedResourceName("rdma/hca_shared_devices_a"));
  CHECK(launch::ValidExtendedResourceName("example.com/a.b-c_d"));
  CHECK_FALSE(launch::ValidExtendedResourceName(std::string(245, 'a') + "/x"));

  // Where the flag has no meaning, and a rank Kubernetes gives itself.
  auto docker = Gpuprep({"launch", "--host", snap, "--image", kImage, "--nodes", "2", "--node-rank", "0",
                         "--master", "10.2.0.1:29500", "--rdma-resource", "rdma/x"});
  CHECK(docker.err == "gpuprep: error: --rdma-resource: only for --format k8s\n");
  auto single =
      Gpuprep({"launch", "--format", "k8s", "--host", snap, "--image", kImage, "--rdma-resource", "rdma/x"});
  CHECK(single.err == "gpuprep: error: --rdma-resource: only meaningful with --nodes 2 or more\n");
  CHECK(run({"--node-rank", "1"}).err ==
        "gpuprep: error: --node-rank: the k8s format gives each pod its rank (the Job's completion index); "
        "drop --node-rank\n");
}

TEST_CASE("launch k8s --nodes 2 on EFA: vpc.amazonaws.com/efa, one per EFA device", "[launch]") {
  json efa = {{"rdma", json::array()}};
  for (const char* name : {"rdmap16s27", "rdmap32s27"})
    efa["rdma"].push_back({{"name", name},
                           {"efa", true},
                           {"ports", {{{"number", 1}, {"state", "ACTIVE"}, {"link_layer", "Unspecified"}}}}});
  const gp::test::TempDir tmp;
  auto r = Gpuprep({"launch", "--format", "k8s", "--host", RdmaSnapshot(tmp, efa), "--image", kImage,
                    "--nodes", "2", "--master", "10.2.0.1:29500"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  YAML::Node c = YAML::Load(r.out)["spec"]["template"]["spec"]["containers"][0];
  CHECK(c["resources"]["limits"]["vpc.amazonaws.com/efa"].as<int>() == 2);
}
