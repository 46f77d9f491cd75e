// Per-node values of a launch for several nodes (launch/nodes.h): every node's `doctor --json` snapshot
// (--host, once per node, in rank order), this host's route only in its own node's command, NCCL's exact
// interface form for another node only when it has that interface, the exclusion form without the snapshots,
// NCCL_IB_HCA of a shared text limited to the ports every node has, and the snapshots validated as input.
// Fixtures: h100x2-roce-node0.json and -node1.json, two RoCE nodes (node1's mlx5_1 is DOWN).
#include "launch/nodes.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "apply/harness.h"
#include "launch/target.h"
#include "support/launch_support.h"

using namespace gp;
using gp::test::Gpuprep;
using gp::test::kImage;
using gp::test::Snapshot;
using nlohmann::json;

namespace {

const std::string kNode0 = Snapshot("h100x2-roce-node0.json");
const std::string kNode1 = Snapshot("h100x2-roce-node1.json");

launch::Target Load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return launch::TargetFromSnapshot(text.str(), path);
}

launch::LocalNet Route(const std::string& ifname) {
  launch::LocalNet n;
  n.measured = true;
  n.route_ifname = ifname;
  n.v4_order = {"lo", "eno1", ifname};
  return n;
}

json Env(const json& doc) {
  json env = json::object();
  for (const auto& e : doc["config"]["env"]) env[e["name"].get<std::string>()] = e["value"];
  return env;
}

}  // namespace

TEST_CASE("launch nodes: this host's route for its own node, a name every other node has, else ^docker,lo",
          "[launch]") {
  const launch::Target a = Load(kNode0), b = Load(kNode1);
  launch::JobNodes j;
  j.local = Route("ens8f0np0");
  j.target = {"this host", &a.host, true};  // launch runs on node 0, for node 0
  j.others = {{"the host in node1.json", &b.host, false}};
  auto c = launch::ChooseSocketIfname(j, "10.2.0.1");
  CHECK(c.value == "=ens8f0np0");
  CHECK(c.why == "this host routes 10.2.0.1 through ens8f0np0");

  // Node 1's command, made on node 0: node 1 has an interface of that name.
  j.target = {"the host in node1.json", &b.host, false};
  j.others = {{"this host", &a.host, true}};
  c = launch::ChooseSocketIfname(j, "10.2.0.1");
  CHECK(c.value == "=ens8f0np0");
  CHECK(c.why ==
        "this host routes 10.2.0.1 through ens8f0np0, and the host in node1.json has an interface ens8f0np0 "
        "too (a "
        "snapshot does not record its routes)");

  // ... and when it has no such interface, or it is down, the exclusion form.
  probe::HostFacts other = b.host;
  other.network.nics[1].operstate = "down";
  j.target.host = &other;
  c = launch::ChooseSocketIfname(j, "10.2.0.1");
  CHECK(c.value == "^docker,lo");
  CHECK(c.why ==
        "the interface toward 10.2.0.1 is not known (this host routes it through ens8f0np0, and the host in "
        "node1.json has no interface ens8f0np0)");

  // Launch runs on none of the nodes: nothing measured here names another node's interface.
  j.target = {"the host in node1.json", &b.host, false};
  j.others = {{"the host in node0.json", &a.host, false}};
  j.local = {};
  j.local.why_not = "the host comes from a snapshot, whose routes are not known";
  CHECK(launch::ChooseSocketIfname(j, "10.2.0.1").value == "^docker,lo");

  // A text every node shares: the exact form only with every node's snapshot, each having the name.
  launch::JobNodes s;
  s.shared = true;
  s.local = Route("ens8f0np0");
  s.target = {"the host in node0.json", &a.host, true};
  CHECK(
      launch::ChooseSocketIfname(s, "10.2.0.1").why ==
      "the interface toward 10.2.0.1 is not known (the other nodes' snapshots are not given (--host, one per "
      "node))");
  s.others = {{"the host in node1.json", &b.host, false}};
  CHECK(launch::ChooseSocketIfname(s, "10.2.0.1").value == "=ens8f0np0");

  // The whole environment of that shared text: the name with its note, the ports both nodes have.
  launch::RunConfig rc;
  rc.multi.nodes = 2;
  rc.multi.master_addr = "10.2.0.1";
  launch::AddNcclEnv(s, std::nullopt, rc);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"NCCL_SOCKET_IFNAME", "=ens8f0np0"}, {"NCCL_IB_HCA", "=mlx5_0:1"}, {"NCCL_NET", "IB"}};
  CHECK(rc.env == want);
  CHECK(rc.warnings ==
        std::vector<std::string>{
            "NCCL_SOCKET_IFNAME==ens8f0np0: this host routes 10.2.0.1 through ens8f0np0, and the "
            "host in node1.json has an interface ens8f0np0 too (a snapshot does not record its "
            "routes)",
            "NCCL_IB_HCA leaves out mlx5_1:1 (not ACTIVE on the host in node1.json): every node "
            "gets the same value, so it names only the ports ACTIVE on every node"});
}

TEST_CASE("launch nodes: one snapshot per node gives each node's command its own RDMA ports", "[launch]") {
  const std::vector<std::string> common = {"launch", "--format", "json",          "--host", kNode0,
                                           "--host", kNode1,     "--image",       kImage,   "--nodes",
                                           "2",      "--master", "10.2.0.1:29500"};
  auto rank = [&common](const char* r) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--node-rank", r, "--", "python", "train.py"});
    return Gpuprep(args);
  };
  auto r0 = rank("0"), r1 = rank("1");
  INFO(r0.err << r1.err);
  REQUIRE(r0.code == 0);
  REQUIRE(r1.code == 0);
  const json e0 = Env(json::parse(r0.out)), e1 = Env(json::parse(r1.out));
  CHECK(e0["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1");
  CHECK(e1["NCCL_IB_HCA"] == "=mlx5_0:1");  // node 1's mlx5_1 is DOWN
  CHECK(e0["NCCL_NET"] == "IB");
  CHECK(e1["NODE_RANK"] == "1");
  // This test's host is neither node: no route of its own goes into either command.
  CHECK(e1["NCCL_SOCKET_IFNAME"] == "^docker,lo");
  CHECK(json::parse(r1.out)["origins"]["env.NCCL_IB_HCA"] == "host");

  // Slurm: one script for both, so only the ports both have, with a note naming the one left out.
  std::vector<std::string> slurm = {"launch",  "--format", "slurm",   "--host", kNode0, "--host", kNode1,
                                    "--image", kImage,     "--nodes", "2",      "--",   "python", "train.py"};
  auto s = Gpuprep(slurm);
  INFO(s.err);
  REQUIRE(s.code == 0);
  CHECK(s.out.find("export NCCL_IB_HCA==mlx5_0:1\n") != std::string::npos);
  CHECK(s.err.find("NCCL_IB_HCA leaves out mlx5_1:1 (not ACTIVE on the host in " + kNode1 + ")") !=
        std::string::npos);
  CHECK(s.err.find("the nodes must have the same RDMA devices") == std::string::npos);  // they were checked

  // Without the other node's snapshot: the exclusion form, node 0's ports, and notes that say so.
  auto alone = Gpuprep({"launch", "--format", "slurm", "--host", kNode0, "--image", kImage, "--nodes", "2",
                        "--", "python", "train.py"});
  REQUIRE(alone.code == 0);
  CHECK(alone.out.find("export NCCL_SOCKET_IFNAME='^docker,lo'\n") != std::string::npos);
  CHECK(alone.out.find("export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n") != std::string::npos);
  CHECK(
      alone.err.find("the nodes must have the same RDMA devices (give every node's snapshot, --host once per "
                     "node, to check them)") != std::string::npos);
}

TEST_CASE("launch nodes: the snapshots are input: one per node, each valid, no machine twice", "[launch]") {
  auto fails = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"launch",         "--image",     kImage, "--master",
                                     "10.2.0.1:29500", "--node-rank", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = Gpuprep(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK(fails({"--nodes", "2", "--host", kNode0, "--host", kNode1, "--host", kNode0}) ==
        "gpuprep: error: --host: 3 snapshots for --nodes 2: give one for the host the launch is for, or one "
        "per "
        "node in rank order\n");
  CHECK(fails({"--nodes", "2", "--host", kNode0, "--host", kNode0}) ==
        "gpuprep: error: --host: " + kNode0 + " and " + kNode0 +
            " are the same machine: give one snapshot per node\n");
  gp::test::TempRoot dir;
  const std::string copy = dir.path() + "/copy.json";
  {
    std::ifstream in(kNode0);
    std::ofstream(copy) << in.rdbuf();
  }
  CHECK(fails({"--nodes", "2", "--host", kNode0, "--host", copy}) ==
        "gpuprep: error: --host: " + kNode0 + " and " + copy +
            " are the same machine (machine-id 0a5e1c9d7b3f4e21a8c6d0f2b4e6a8c0): give one snapshot per "
            "node\n");
  const std::string bad = dir.path() + "/bad.json";
  std::ofstream(bad) << "{\"host\": {\"os\": 3,\n";
  const std::string err = fails({"--nodes", "2", "--host", kNode0, "--host", bad});
  CHECK(err.rfind("gpuprep: error: " + bad + ":", 0) == 0);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}
