// The Xid history in doctor's gpu layer: each event of the fixtures (real lines from public issue threads,
// tests/fixtures/xid/README.md) mapped to its GPU and judged with NVIDIA's action from the generated
// catalogue.
#include "probe/xid.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "layers/gpu/health.h"
#include "layers/sample.h"
#include "sys/fs.h"
#include "util/xid_catalogue.h"

using namespace gp;
using verdict::Status;

namespace {

std::vector<const verdict::Finding*> WithCode(const verdict::LayerReport& r, const std::string& code) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings)
    if (f.code == code) out.push_back(&f);
  return out;
}

// The sample host's GPUs moved to the fixture's addresses: 0 at 01:00, 1 at 0a:00, 2 at cb:00.
test::Inputs FixtureHost(const std::string& kmsg) {
  test::Inputs t;
  t.host.gpus.resize(3);
  const char* pcis[] = {"0000:01:00.0", "0000:0a:00.0", "0000:cb:00.0"};
  for (int i = 0; i < 3; ++i) {
    t.host.gpus[i].pci = pcis[i];
    t.host.gpus[i].uuid = "GPU-0000000" + std::to_string(i);
  }
  sys::DiskFs fs("/");
  t.host.xid.read = true;
  t.host.xid.sources = {"/dev/kmsg"};
  probe::ScanKmsg(fs.Read(std::string(GP_FIXTURES) + "/xid/" + kmsg).value(), t.host.xid);
  return t;
}

verdict::LayerReport Check(const test::Inputs& t) {
  verdict::LayerReport r;
  layers::CheckXidHistory(t.in(), r);
  return r;
}

}  // namespace

TEST_CASE("xid catalogue: the generated table, looked up", "[unit][xid]") {
  const auto* x79 = gp::FindXid(79);
  REQUIRE(x79);
  CHECK(std::string(x79->description) == "GPU has fallen off the bus");
  CHECK(std::string(x79->immediate) == "RESTART_BM");
  CHECK(x79->cls == gp::XidClass::kHardware);
  CHECK(gp::FindXid(13)->cls == gp::XidClass::kApplication);
  CHECK(gp::FindXid(31)->cls == gp::XidClass::kApplication);
  CHECK(gp::FindXid(43)->cls == gp::XidClass::kApplication);
  CHECK(gp::FindXid(48)->cls == gp::XidClass::kMemory);
  CHECK(gp::FindXid(95)->cls == gp::XidClass::kMemory);
  CHECK(gp::FindXid(74)->cls == gp::XidClass::kFabric);
  CHECK(gp::FindXid(119)->cls == gp::XidClass::kDriver);
  CHECK(gp::FindXid(154)->cls == gp::XidClass::kMeta);
  CHECK_FALSE(gp::FindXid(0));
  CHECK_FALSE(gp::FindXid(100000));
  CHECK(std::string(gp::kXidCatalogueCommit).size() == 40);
}

TEST_CASE("xid: the boot's events, each on its GPU with NVIDIA's action", "[unit][xid]") {
  const auto t = FixtureHost("kmsg-boot");
  const auto r = Check(t);
  auto history = WithCode(r, "gpu.xid-history");
  REQUIRE(history.size() == 1);
  CHECK(history[0]->status == Status::kOk);
  CHECK(history[0]->message == "7 Xid events this boot in /dev/kmsg");

  // Two Xid 31 on GPU 0: one application finding with the count and both times.
  auto app = WithCode(r, "gpu.xid-application");
  REQUIRE(app.size() == 2);
  CHECK(app[0]->status == Status::kWarn);
  CHECK(
      app[0]->message ==
      "GPU 0 (0000:01:00.0, GPU-00000000) logged Xid 31 (GPU memory page fault) 2 times, first at "
      "22859.081860 s after boot, last at 23203.142515 s after boot (last by python, pid 14566): the job was "
      "at fault, not the GPU");
  CHECK(*app[0]->fix ==
        "restart the job; then check the job's code (an illegal address or instruction), e.g. with "
        "compute-sanitizer (NVIDIA's Xid catalogue: RESTART_APP, then WORKFLOW_XID_31); the GPU itself needs "
        "no "
        "action");
  CHECK(app[1]->message.find(
            "GPU 2 (0000:cb:00.0, GPU-00000002) logged Xid 13 (Graphics Engine Exception) once") == 0);

  // Xid 62 on GPU 1: a driver/firmware halt whose action is a reset of the GPU.
  auto drv = WithCode(r, "gpu.xid-driver");
  REQUIRE(drv.size() == 2);
  CHECK(drv[0]->status == Status::kFail);
  CHECK(drv[0]->message.find("GPU 1 (0000:0a:00.0, GPU-00000001) logged Xid 62 (") == 0);
  CHECK(drv[0]->fix->find("sudo systemctl stop nvidia-persistenced && sudo nvidia-smi -r -i 1") !=
        std::string::npos);
  CHECK(drv[0]->fix->find("(NVIDIA's Xid catalogue: RESET_GPU, then CONTACT_SUPPORT)") != std::string::npos);
  CHECK(drv[1]->message.find("logged Xid 109 (Context Switch Timeout Error)") != std::string::npos);

  // Xid 79 at an address where the host has no GPU: still reported, said so.
  auto hw = WithCode(r, "gpu.xid-hardware");
  REQUIRE(hw.size() == 2);  // 45 on GPU 1 (a warning: it follows other Xids) and 79
  const auto* x79 = hw[0]->message.find("Xid 79") != std::string::npos ? hw[0] : hw[1];
  const auto* x45 = x79 == hw[0] ? hw[1] : hw[0];
  CHECK(x79->status == Status::kFail);
  CHECK(x79->message ==
        "PCI 0000:44:00 (no GPU of this host at that address) logged Xid 79 (GPU has fallen off the bus), a "
        "hardware event, once, at 41000.000000 s after boot");
  CHECK(
      *x79->fix ==
      "drain the node and restart it (sudo reboot); if it recurs, report the board to the provider or NVIDIA "
      "support (NVIDIA's Xid catalogue: RESTART_BM, then CONTACT_SUPPORT)");
  CHECK(x45->status == Status::kWarn);
}

TEST_CASE("xid: a wrapped ring reports since when, memory and fabric events fail", "[unit][xid]") {
  auto t = FixtureHost("kmsg-wrapped");
  t.host.gpus[1].pci = "0000:9b:00.0";
  t.host.gpus[2].pci = "0018:01:00.0";
  const auto r = Check(t);
  auto history = WithCode(r, "gpu.xid-history");
  REQUIRE(history.size() == 1);
  CHECK(history[0]->message ==
        "4 Xid events since 81234.567890 s after boot (the oldest record read) in /dev/kmsg; earlier records "
        "of this boot were not available");
  auto mem = WithCode(r, "gpu.xid-memory");
  REQUIRE(mem.size() == 1);
  // Xid 94, a contained error: NVIDIA's immediate action is to restart the job.
  CHECK(mem[0]->status == Status::kWarn);
  CHECK(mem[0]->message.find("GPU 1 (0000:9b:00.0, GPU-00000001) logged Xid 94 (Contained memory error)") ==
        0);
  // Each event says since when the log was read: the table shows no ok row beside a failure.
  CHECK(mem[0]->message.find("(Xid events read since 81234.567890 s after boot, the oldest record read)") !=
        std::string::npos);
  auto fab = WithCode(r, "gpu.xid-fabric");
  REQUIRE(fab.size() == 1);
  CHECK(fab[0]->status == Status::kFail);
  CHECK(fab[0]->message.find("GPU 2 (0018:01:00.0, GPU-00000002) logged Xid 145") == 0);
  CHECK(fab[0]->fix->find("nvidia-smi nvlink -s -i 2") != std::string::npos);
  // Its line names the NVLink unit, link and error status; NVIDIA's decode of Xid 144-150 has that row.
  CHECK(fab[0]->message.find(
            "; its last line: NVLink unit RLW_RXPIPE, link 13, error status 0x00000008, logged "
            "Nonfatal; NVIDIA's Xid 144-150 decode: Non-fatal, immediate action IGNORE, "
            "investigatory CONTACT_SUPPORT") != std::string::npos);
  auto app = WithCode(r, "gpu.xid-application");
  REQUIRE(app.size() == 1);  // the old-form Xid 32, twice
  CHECK(app[0]->message.find("logged Xid 32 (Invalid or corrupted push buffer stream) 2 times") !=
        std::string::npos);
}

TEST_CASE("xid: nothing read is a skip with the reason; nothing found says over which window",
          "[unit][xid]") {
  test::Inputs t;
  // Facts read back from a snapshot (or made by hand) were never looked at: no finding at all.
  CHECK(Check(t).findings.empty());
  t.host.xid.skip_reason =
      "cannot read /dev/kmsg: Operation not permitted (kernel.dmesg_restrict=1 keeps the kernel log from "
      "users "
      "other than root)";
  auto r = Check(t);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].code == "gpu.xid-not-read");
  CHECK(r.findings[0].status == Status::kSkip);
  CHECK(r.findings[0].message == "the Xid history was not read: " + t.host.xid.skip_reason);

  t.host.xid = {};
  t.host.xid.read = true;
  t.host.xid.from_boot = true;
  t.host.xid.sources = {"/var/log/kern.log"};
  r = Check(t);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].message == "no Xid events this boot in /var/log/kern.log");
}

TEST_CASE("xid: 154 points at the driver's recovery verdict; an unknown code warns", "[unit][xid]") {
  test::Inputs t;
  t.host.xid.read = true;
  t.host.xid.from_boot = true;
  t.host.xid.sources = {"/dev/kmsg"};
  // Constructed events (no public thread quotes a whole Xid 154 line): GPU 3 at 0000:13:00.
  t.host.xid.events.push_back(
      {154, "0000:13:00", "10.000000 s after boot", "", "", "GPU recovery action changed"});
  t.host.xid.events.push_back({999, "0000:13:00", "11.000000 s after boot", "", "", "something new"});
  t.host.gpus[3].health.recovery_action = 2;  // node reboot
  auto r = Check(t);
  auto meta = WithCode(r, "gpu.xid-recovery-changed");
  REQUIRE(meta.size() == 1);
  CHECK(meta[0]->status == Status::kWarn);
  CHECK(*meta[0]->fix == "drain the node, then sudo reboot");
  auto unknown = WithCode(r, "gpu.xid-unknown");
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0]->status == Status::kWarn);

  t.host.gpus[3].health.recovery_action = 0;
  r = Check(t);
  CHECK(WithCode(r, "gpu.xid-recovery-changed")[0]->status == Status::kOk);
}

TEST_CASE("xid: a journal read that does not reach the boot says earlier records were not available",
          "[unit][xid]") {
  sys::DiskFs fs("/");
  const std::string all = fs.Read(std::string(GP_FIXTURES) + "/xid/journal-export").value();
  // The export from the entry whose MESSAGE starts with `message` on.
  auto from = [&](const std::string& message) {
    const size_t at = all.find("MESSAGE=" + message);
    REQUIRE(at != std::string::npos);
    return all.substr(all.rfind("__CURSOR=", at));
  };
  auto history = [&](const std::string& data, bool across_boots, const std::string& source) {
    test::Inputs t;
    t.host.gpus.resize(1);
    t.host.gpus[0].pci = "0000:07:00.0";
    t.host.xid.read = true;
    t.host.xid.sources = {source};
    probe::ScanJournalExport(data, t.host.xid, across_boots);
    const auto r = Check(t);
    auto rows = WithCode(r, "gpu.xid-history");
    REQUIRE(rows.size() == 1);
    return rows[0]->message;
  };
  SECTION("this boot's journal (doctor --health), from its first record or not") {
    CHECK(history(all, false, "journalctl -k -b") == "2 Xid events this boot in journalctl -k -b");
    CHECK(history(from("Command line:"), false, "journalctl -k -b") ==
          "2 Xid events since 2024-12-02 11:35:08 UTC (the oldest record read) in journalctl -k -b; earlier "
          "records of this boot were not available");
  }
  SECTION("a window (doctor --since) that starts after this boot's first record") {
    CHECK(history(from("Command line:"), true, "journalctl -k --since=2024-12-02 11:35") ==
          "2 Xid events since 2024-12-02 11:35:08 UTC (the oldest record read) in journalctl -k "
          "--since=2024-12-02 11:35; earlier records of this boot were not available");
  }
  SECTION("a window (doctor --since) that reaches back before this boot: nothing of this boot is missing") {
    CHECK(history(all, true, "journalctl -k --since=2024-12-01") ==
          "3 Xid events since 2024-12-01 10:23:32 UTC (the oldest record read) in journalctl -k "
          "--since=2024-12-01");
  }
}

TEST_CASE("xid: NVLink Xid 144-150 lines decoded with NVIDIA's decode table", "[unit][xid]") {
  const auto& rules = gp::XidNvlinkDecode();
  CHECK(rules.size() == 94);
  for (const auto& r : rules) {
    CHECK(r.code >= 144);
    CHECK(r.code <= 150);
  }
  // The fixture's Xid 145 (tests/fixtures/xid/kmsg-wrapped): IntrInfo 0x0409a0c2 matches the row's pattern of
  // drivers before R575.
  auto x = gp::DecodeNvlinkXid(145,
                               "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 "
                               "0x00000000 0x00100000 0x00000004)");
  REQUIRE(x);
  CHECK(x->unit == "RLW_RXPIPE");
  CHECK(x->severity == "Nonfatal");
  CHECK(x->link == 13);
  CHECK(x->intrinfo == 0x0409a0c2u);
  CHECK(x->error_status == 8u);
  REQUIRE(x->rule);
  CHECK(std::string(x->rule->intrinfo_v1) == "------000000----------0011000010");
  CHECK(std::string(x->rule->resolution) == "IGNORE");
  // An IntrInfo built to the R575 pattern of the same row ("...0000110") matches it too; one with bits the
  // row forbids (20-25 set) matches no row, and is still reported by its fields.
  x = gp::DecodeNvlinkXid(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 2 (0x00000006 0x00000008)");
  REQUIRE(x);
  REQUIRE(x->rule);
  CHECK(std::string(x->rule->unit) == "RLW_RXPIPE");
  x = gp::DecodeNvlinkXid(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 2 (0x03f00006 0x00000008)");
  REQUIRE(x);
  CHECK(x->rule == nullptr);
  // A unit the table writes with alternatives ("TLW_TX/TLW_TX_PIPE0") matches either name; an error status
  // the table has no row for matches none.
  for (const auto& r : rules)
    if (std::string(r.unit) == "TLW_TX/TLW_TX_PIPE0") {
      unsigned v = 0;
      for (int i = 0; i < 32; ++i) v |= (r.intrinfo_v2[i] == '1' ? 1u : 0u) << (31 - i);
      char line[96];
      std::snprintf(line, sizeof line, "TLW_TX_PIPE0 Fatal XC1 i0 Link -1 (0x%08x 0x%08x)", v,
                    r.error_status);
      x = gp::DecodeNvlinkXid(r.code, line);
      REQUIRE(x);
      CHECK(x->rule != nullptr);
      std::snprintf(line, sizeof line, "TLW_TX_PIPE0 Fatal XC1 i0 Link -1 (0x%08x 0x40000000)", v);
      x = gp::DecodeNvlinkXid(r.code, line);
      REQUIRE(x);
      CHECK(x->rule == nullptr);
      break;
    }
  // Not an NVLink code, or not the NVLink form: nothing decoded.
  CHECK_FALSE(gp::DecodeNvlinkXid(79, "GPU has fallen off the bus"));
  CHECK_FALSE(gp::DecodeNvlinkXid(145, "GPU has fallen off the bus"));
  CHECK_FALSE(gp::DecodeNvlinkXid(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2)"));
  CHECK_FALSE(gp::DecodeNvlinkXid(145, "RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0xzz)"));
  CHECK_FALSE(gp::DecodeNvlinkXid(145, "rlw;rm Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)"));
}
