// The NCCL log reader over recorded logs (tests/fixtures/nccl-logs/README.md names each one's source: lines
// captured from NCCL 2.28.9 here, a log quoted in a public guide, and logs written from NCCL's own format
// strings at the tags the stacks pin), each line class, the wordings of older releases, and hostile input.
#include "nccllog/reader.h"

#include <catch2/catch.hpp>
#include <string>

#include "support/cli.h"
#include "sys/fs.h"

using namespace gp;
using nccllog::Level;
using nccllog::Summary;

namespace {

const std::string kLogs = std::string(GP_FIXTURES) + "/nccl-logs";

std::string Fixture(const std::string& name) {
  sys::DiskFs fs("/");
  return fs.Read(kLogs + "/" + name).value();
}

const nccllog::Finding* Find(const Summary& s, const std::string& code) {
  for (const auto& f : s.findings)
    if (f.code == code) return &f;
  return nullptr;
}

bool AnyFail(const Summary& s) {
  for (const auto& f : s.findings)
    if (f.level == Level::kFail) return true;
  return false;
}

}  // namespace

TEST_CASE("nccl-log: a healthy two-node InfiniBand job with GPUDirect RDMA (2.27.7)", "[nccllog]") {
  Summary s = nccllog::ReadText(Fixture("2.27.7-two-nodes-ib-gdr.log"));
  CHECK(s.version == "2.27.7");
  CHECK(s.bootstrap == "bond0");
  CHECK(s.network == "IB");
  CHECK(s.ib_devices.size() == 8);
  CHECK(s.ib_devices[0] == "mlx5_0:1/IB");
  CHECK(s.net_channels == 4);
  CHECK(s.gdr_channels == 4);
  REQUIRE(Find(s, "nccl-log.gdr"));
  CHECK(Find(s, "nccl-log.gdr")->level == Level::kOk);
  CHECK(Find(s, "nccl-log.network")->level == Level::kOk);
  CHECK_FALSE(Find(s, "nccl-log.plugin-load-failed"));  // "Could not find: libnccl-net.so." is no plugin
  CHECK_FALSE(AnyFail(s));
}

TEST_CASE("nccl-log: RoCE completion status 12, ibv_modify_qp retries and the watchdog (2.28.9)",
          "[nccllog]") {
  Summary s = nccllog::ReadText(Fixture("2.28.9-roce-status12.log"));
  CHECK(s.version == "2.28.9");
  CHECK(s.ib_devices == std::vector<std::string>{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE"});
  const auto* c = Find(s, "nccl-log.ib-completion-error");
  REQUIRE(c);
  CHECK(c->level == Level::kFail);
  CHECK(c->message.find("12 (IBV_WC_RETRY_EXC_ERR)") != std::string::npos);
  CHECK(c->count == 2);
  CHECK(c->first_line == 11);
  CHECK(c->last_line == 15);
  CHECK(c->fix.find("RoCE v2 GID") != std::string::npos);
  const auto* q = Find(s, "nccl-log.modify-qp-retry");
  REQUIRE(q);
  CHECK(q->level == Level::kWarn);
  CHECK(q->message.find("110 Connection timed out") != std::string::npos);
  REQUIRE(Find(s, "nccl-log.watchdog-timeout"));
  CHECK(Find(s, "nccl-log.watchdog-timeout")->level == Level::kFail);
  CHECK(Find(s, "nccl-log.gdr")->level == Level::kOk);
}

TEST_CASE("nccl-log: a plugin that fails to load and the fall back to sockets (2.30.7)", "[nccllog]") {
  Summary s = nccllog::ReadText(Fixture("2.30.7-plugin-socket-fallback.log"));
  CHECK(s.version == "2.30.7");
  CHECK(s.network == "Socket");
  const auto* p = Find(s, "nccl-log.plugin-load-failed");
  REQUIRE(p);
  CHECK(p->message.find("libnccl-net-ofi.so") != std::string::npos);
  CHECK(p->message.find("libfabric.so.1") != std::string::npos);
  CHECK(p->first_line == 3);
  REQUIRE(Find(s, "nccl-log.socket-fallback"));
  CHECK(Find(s, "nccl-log.socket-fallback")->level == Level::kFail);
  CHECK_FALSE(Find(s, "nccl-log.gdr-off"));  // socket channels are not judged for GPUDirect RDMA
  CHECK(s.net_channels == 2);
}

TEST_CASE("nccl-log: completion error 12 as NCCL 2.18 wrote it, wrapped by a web page", "[nccllog]") {
  Summary s = nccllog::ReadText(Fixture("2.18-ml-engineering-error12.log"));
  const auto* c = Find(s, "nccl-log.ib-completion-error");
  REQUIRE(c);
  CHECK(c->message.find("status 12 (IBV_WC_RETRY_EXC_ERR)") != std::string::npos);
  CHECK(s.ib_devices == std::vector<std::string>{"ibP111p0s0:1/IB", "rdmaP1111p0s2:1/RoCE"});
}

TEST_CASE("nccl-log: the wordings up to 2.23 (Bootstrap : Using, Plugin load, GPU Direct RDMA Disabled)",
          "[nccllog]") {
  Summary s = nccllog::ReadText(Fixture("2.18-older-wordings.log"));
  CHECK(s.version == "2.18.5");  // NCCL_DEBUG=VERSION's line has no prefix
  CHECK(s.bootstrap == "lo");
  const auto* b = Find(s, "nccl-log.bootstrap-interface");
  REQUIRE(b);
  CHECK(b->level == Level::kWarn);  // the node count is not in the log: a warning
  CHECK(b->fix.find("NCCL_SOCKET_IFNAME") != std::string::npos);
  CHECK(Find(s, "nccl-log.oob-interface"));
  CHECK_FALSE(
      Find(s, "nccl-log.plugin-load-failed"));  // returned 2 for libnccl-net.so itself: none installed
  CHECK(Find(s, "nccl-log.gdr-disabled"));
  REQUIRE(Find(s, "nccl-log.gdr-off"));
  CHECK(Find(s, "nccl-log.gdr-off")->message.find("none of 2 network channels") != std::string::npos);
  const auto* q = Find(s, "nccl-log.modify-qp-failed");
  REQUIRE(q);
  CHECK(q->level == Level::kFail);
  CHECK(q->message.find("Network is unreachable") != std::string::npos);
}

TEST_CASE("nccl-log: bootstrap lines captured from NCCL 2.28.9's ncclGetUniqueId", "[nccllog]") {
  Summary eth = nccllog::ReadText(Fixture("2.28.9-captured-bootstrap-eth0.log"));
  CHECK(eth.bootstrap == "eth0");
  CHECK(eth.findings.empty());  // ENV/Plugin's "Could not find" is no failure
  Summary lo = nccllog::ReadText(Fixture("2.28.9-captured-bootstrap-lo.log"));
  CHECK(lo.bootstrap == "lo");
  REQUIRE(Find(lo, "nccl-log.bootstrap-interface"));
  Summary none = nccllog::ReadText(Fixture("2.28.9-captured-no-interface.log"));
  const auto* n = Find(none, "nccl-log.bootstrap-no-interface");
  REQUIRE(n);
  CHECK(n->level == Level::kFail);
  CHECK(n->message == "NCCL_SOCKET_IFNAME=nosuch0 matches no interface of this host");
  CHECK(n->first_line == 4);
}

TEST_CASE("nccl-log: one node makes the bootstrap interface and sockets harmless", "[nccllog]") {
  Summary s = nccllog::ReadText(
      "h:1:1 [0] NCCL INFO Bootstrap: Using lo:127.0.0.1<0>\n"
      "h:1:2 [0] NCCL INFO Using network Socket\n"
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n");
  CHECK(Find(s, "nccl-log.bootstrap-interface")->level == Level::kInfo);
  CHECK(Find(s, "nccl-log.network")->level == Level::kInfo);
  CHECK_FALSE(AnyFail(s));
}

TEST_CASE("nccl-log: sockets between nodes without a plugin failure warn", "[nccllog]") {
  Summary s = nccllog::ReadText(
      "h:1:2 [0] NCCL INFO NET/IB : No device found.\n"
      "h:1:2 [0] NCCL INFO Using network Socket\n"
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n");
  const auto* f = Find(s, "nccl-log.socket");
  REQUIRE(f);
  CHECK(f->level == Level::kWarn);
  CHECK(f->message.find("no usable InfiniBand") != std::string::npos);
}

TEST_CASE("nccl-log: completion statuses by number and by name; unknown ones", "[nccllog]") {
  CHECK(nccllog::WcStatusName(12) == "IBV_WC_RETRY_EXC_ERR");
  CHECK(nccllog::WcStatusName(21) == "IBV_WC_GENERAL_ERR");
  CHECK(nccllog::WcStatusName(22).empty());
  CHECK(nccllog::WcStatusName(-1).empty());
  Summary s = nccllog::ReadText(
      "a:1:1 [0] transport/net_ib.cc:1 NCCL WARN NET/IB: Got completion from peer 1.2.3.4<5> with status=4 "
      "opcode=0 len=0 vendor err 81 (Send) hca mlx5_0\n"
      "a:1:1 [0] transport/net_ib.cc:1 NCCL WARN NET/IB: Got completion from peer x with status=WEIRD "
      "opcode\n");
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].message.find("4 (IBV_WC_LOC_PROT_ERR)") != std::string::npos);
  CHECK(s.findings[0].fix.find("GPUDirect RDMA") != std::string::npos);
  CHECK(s.findings[1].message.find("status unknown") != std::string::npos);
}

TEST_CASE("nccl-log: hostile input is bounded and escaped", "[nccllog]") {
  std::string big(nccllog::kMaxLineBytes + 1, 'x');
  Summary s = nccllog::ReadText("h:1:1 [0] NCCL INFO Bootstrap: Using \x1b[31mev\x07il:1.2.3.4<0>\n" + big +
                                "\n\xff\xfe NCCL WARN Got completion from peer \x1b]0;t\x07 with error 99\r\n"
                                "h:1:1 [0] NCCL WARN something else happened\n");
  CHECK(s.long_lines == 1);
  CHECK(s.lines == 4);
  for (const auto& f : s.findings) {
    CHECK(f.message.find('\x1b') == std::string::npos);
    CHECK(f.quote.find('\x1b') == std::string::npos);
    CHECK(f.quote.size() <= nccllog::kMaxQuoteBytes * 4);
  }
  REQUIRE(Find(s, "nccl-log.ib-completion-error"));
  CHECK(Find(s, "nccl-log.ib-completion-error")->message.find("status 99") != std::string::npos);
  REQUIRE(Find(s, "nccl-log.other-warn"));
  CHECK(nccllog::ReadText("").findings.empty());
  CHECK(nccllog::ReadText("\n\n").lines == 2);
}

TEST_CASE("nccl-log: the verb reads a FILE or stdin; exit 1 on a failure, 2 on an unreadable file",
          "[nccllog][cli]") {
  auto ok = test::Gpuprep({"nccl-log", kLogs + "/2.27.7-two-nodes-ib-gdr.log"});
  CHECK(ok.code == 0);
  CHECK(ok.out.find("NCCL 2.27.7; bootstrap: bond0; network: IB") != std::string::npos);
  test::CliOptions in;
  in.stdin_text = Fixture("2.28.9-roce-status12.log");
  auto bad = test::Gpuprep({"nccl-log"}, in);
  CHECK(bad.code == 1);
  CHECK(bad.out.find("fail  an RDMA transfer failed") != std::string::npos);
  CHECK(bad.out.find("  fix: ") != std::string::npos);
  auto json = test::Gpuprep({"nccl-log", "--json", "-"}, in);
  CHECK(json.code == 1);
  CHECK(json.out.find("\"code\": \"nccl-log.ib-completion-error\"") != std::string::npos);
  auto missing = test::Gpuprep({"nccl-log", kLogs + "/no-such.log"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no-such.log") != std::string::npos);
  test::CliOptions empty;
  auto nothing = test::Gpuprep({"nccl-log"}, empty);
  CHECK(nothing.code == 0);
  CHECK(nothing.out.find("run the job with NCCL_DEBUG=INFO") != std::string::npos);
}
