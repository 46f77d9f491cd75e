// The check across nodes judged (accept/judge_nodes.h): the bus bandwidth's floor from the ports NCCL used,
// the transport and GPUDirect RDMA from NCCL's own log lines; the recorded runs themselves are judged through
// the CLI in tests/integration/accept_fixtures.sh.
#include "accept/judge_nodes.h"

#include <catch2/catch.hpp>

#include "accept/stream.h"

using gp::accept::NodePort;
using gp::accept::NodesInfo;
using gp::accept::Status;

namespace {

NodesInfo Ports(int n, const std::string& link_layer, double rate, const std::string& state = "ACTIVE") {
  NodesInfo info;
  info.nnodes = 2;
  info.master = "10.0.0.1:29500";
  for (int i = 0; i < n; ++i)
    info.ports.push_back(NodePort{"mlx5_" + std::to_string(i), 1, link_layer, rate, state});
  return info;
}

std::vector<std::string> Used(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("mlx5_" + std::to_string(i) + ":1/IB");
  return out;
}

const gp::accept::Check& CheckNamed(const std::vector<gp::accept::Check>& cs, const std::string& name) {
  for (const auto& c : cs)
    if (c.name == name) return c;
  FAIL("no check " << name);
  return cs.front();
}

}  // namespace

TEST_CASE("nodes floor: the sum of the sourced per-port floors of the ports NCCL used", "[accept][nodes]") {
  std::string why;
  auto f = gp::accept::NodesFloor(Ports(8, "InfiniBand", 400), Used(8), &why);
  REQUIRE(f);
  CHECK(f->value == Approx(8 * 375 / 8.0));  // 375 GB/s: eight NDR ports at 375 Gb/s each
  CHECK(f->kind == "derived");
  CHECK(f->source.find("nd96isr_h100_v5.conf:57") != std::string::npos);

  f = gp::accept::NodesFloor(Ports(8, "InfiniBand", 200), Used(4), &why);  // NCCL used four of eight
  REQUIRE(f);
  CHECK(f->value == Approx(4 * 185 / 8.0));

  CHECK_FALSE(gp::accept::NodesFloor(Ports(2, "Ethernet", 400), Used(2), &why));
  CHECK(why == "mlx5_0:1 is Ethernet: no sourced floor for it");
  CHECK_FALSE(gp::accept::NodesFloor(Ports(2, "InfiniBand", 100), Used(2), &why));
  CHECK(why == "mlx5_0:1 runs at 100 Gb/s: no sourced floor for that rate");
  CHECK_FALSE(gp::accept::NodesFloor(Ports(2, "InfiniBand", 400), Used(3), &why));
  CHECK(why == "NCCL used mlx5_2:1, which this node's ports do not list");
  CHECK_FALSE(gp::accept::NodesFloor(Ports(2, "InfiniBand", 400), {}, &why));
}

TEST_CASE("nodes checks: sockets without an ACTIVE RDMA port warn, with one fail", "[accept][nodes]") {
  gp::accept::Recording rec;
  rec.nodes = Ports(2, "InfiniBand", 400, "DOWN");
  rec.nccl_log = {"a:1:2 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>",
                  "a:1:2 [0] NCCL INFO Using network Socket"};
  gp::accept::Phase p;
  p.phase = "all_reduce_nodes";
  p.value = 2.5;
  p.nodes = 2;
  p.peer = 16;
  rec.phases.push_back(p);
  auto checks = gp::accept::NodesChecks(rec);
  CHECK(CheckNamed(checks, "transport").status == Status::kWarn);
  CHECK(CheckNamed(checks, "gpudirect rdma").status == Status::kNotApplicable);
  CHECK(CheckNamed(checks, "all_reduce_nodes").status == Status::kNoExpectation);

  rec.nodes = Ports(2, "InfiniBand", 400);
  checks = gp::accept::NodesChecks(rec);
  const auto& t = CheckNamed(checks, "transport");
  CHECK(t.status == Status::kFail);
  CHECK(t.reason.find("ACTIVE RDMA ports (mlx5_0:1, mlx5_1:1)") != std::string::npos);

  rec.nccl_log.clear();  // no NCCL_DEBUG=INFO: nothing to say of the transport
  CHECK(CheckNamed(gp::accept::NodesChecks(rec), "transport").status == Status::kSkipped);
}

TEST_CASE("program stream: NCCL's log lines kept apart from the rest of stderr", "[accept][program]") {
  gp::accept::ProgramStream s(1, true);
  s.KeepNcclLines();
  s.on_stderr("Traceback (most recent call last):\nhost:1:2 [0] NCCL INFO Using net");
  s.on_stderr("work IB\r\nhost:1:2 [0] NCCL WARN bad \x1b[31mred\nValueError: boom\n");
  s.on_stderr("host:1:2 [0] NCCL INFO " + std::string(5000, 'x'));
  s.Finish(1);
  REQUIRE(s.NcclLines().size() == 3);
  CHECK(s.NcclLines()[0] == "host:1:2 [0] NCCL INFO Using network IB");
  CHECK(s.NcclLines()[1] == "host:1:2 [0] NCCL WARN bad ?[31mred");
  CHECK(s.NcclLines()[2].size() == gp::accept::kMaxNcclLineBytes);
  CHECK(s.StderrTail(2) == "Traceback (most recent call last): | ValueError: boom");

  gp::accept::ProgramStream many(1, true);
  many.KeepNcclLines();
  std::string chunk;
  for (size_t i = 0; i < gp::accept::kMaxNcclLines + 5; ++i) chunk += "h:1:2 [0] NCCL INFO line\n";
  many.on_stderr(chunk);
  CHECK(many.NcclLines().size() == gp::accept::kMaxNcclLines);
  CHECK(many.NcclLinesDropped() == 5);
}
