// The Xid history's inputs: Xid lines from public issue threads (tests/fixtures/xid/README.md names each
// source) in kmsg records and in rsyslog text logs, hostile lines, the bounded readers, and the --root probe.
#include "probe/xid.h"

#include <catch2/catch.hpp>
#include <string>

#include "probe/steps.h"
#include "sys/fs.h"
#include "sys/kernel_log.h"

using namespace gp;

namespace {

const std::string kXid = std::string(GP_FIXTURES) + "/xid";

std::string Fixture(const std::string& name) {
  sys::DiskFs fs("/");
  return fs.Read(kXid + "/" + name).value();
}

probe::HostFacts WithGpusAt(std::initializer_list<const char*> pcis) {
  probe::HostFacts h;
  int i = 0;
  for (const char* pci : pcis) {
    probe::Gpu g;
    g.index = i++;
    g.pci = pci;
    h.gpus.push_back(g);
  }
  return h;
}

}  // namespace

TEST_CASE("xid: the line's forms: pid and name, <unknown>, none, no PCI: prefix, a wide domain",
          "[unit][xid]") {
  auto e = probe::ParseXidMessage(
      "NVRM: Xid (PCI:0000:01:00): 31, pid=14292, name=python, Ch 00000030, intr 00000000. MMU Fault: ENGINE "
      "HOST0 HUBCLIENT_ESC faulted @ 0x10_00200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ");
  REQUIRE(e);
  CHECK(e->code == 31);
  CHECK(e->pci == "0000:01:00");
  CHECK(e->pid == "14292");
  CHECK(e->process == "python");
  CHECK(e->detail.rfind("Ch 00000030, intr 00000000. MMU Fault", 0) == 0);

  e = probe::ParseXidMessage("NVRM: Xid (PCI:0000:0a:00): 45, pid='<unknown>', name=<unknown>, Ch 00000008");
  REQUIRE(e);
  CHECK(e->pid.empty());
  CHECK(e->process.empty());
  CHECK(e->detail == "Ch 00000008");

  e = probe::ParseXidMessage("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus");
  REQUIRE(e);
  CHECK(e->code == 79);
  CHECK(e->detail == "GPU has fallen off the bus");

  // The form older drivers wrote (gpud's kmsg.go quotes it), and upper-case hex.
  e = probe::ParseXidMessage("NVRM: Xid (0000:03:00): 14, Channel 00000001");
  REQUIRE(e);
  CHECK(e->pci == "0000:03:00");
  e = probe::ParseXidMessage(
      "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2)");
  REQUIRE(e);
  CHECK(e->pci == "0018:01:00");
  CHECK(probe::ParseXidMessage("NVRM: Xid (PCI:0000:CB:00): 13, x")->pci == "0000:cb:00");
  // A line that ends at the code.
  CHECK(probe::ParseXidMessage("NVRM: Xid (PCI:0000:01:00): 79")->code == 79);
}

TEST_CASE("xid: malformed and hostile lines give no event and never a wrong one", "[unit][xid]") {
  for (const char* bad : {
           "NVRM: Xid (PCI:0000:01:00) 79, no colon",
           "NVRM: Xid (PCI:0000:01:00): x79, letters",
           "NVRM: Xid (PCI:0000:01:00): 0, zero",
           "NVRM: Xid (PCI:0000:01:00): 1234567, too long",
           "NVRM: Xid (PCI:0000:01:00): 79x, trailing",
           "NVRM: Xid (PCI:00:01:00:00): 79, an extra group",
           "NVRM: Xid (PCI:0000:1:00): 79, a short bus",
           "NVRM: Xid (PCI:zzzz:01:00): 79, not hex",
           "NVRM: Xid (PCI:0000:01:00",
           "NVRM: Xid (",
           "Xid 79 PCI:0000:f0:00 pid=477448",  // a user's summary, not the driver's line
           "",
       })
    CHECK_FALSE(probe::ParseXidMessage(bad));
  // Control bytes and escapes in the fields are replaced; the detail is bounded.
  auto e = probe::ParseXidMessage(std::string("NVRM: Xid (PCI:0000:01:00): 13, pid=1\x1b[31m, name=a\x07, ") +
                                  std::string(10000, 'A'));
  REQUIRE(e);
  CHECK(e->pid == "1?[31m");
  CHECK(e->process == "a?");
  CHECK(e->detail.size() <= probe::kMaxXidDetail);
  // The line is looked at up to its bound: an Xid beyond it is not read.
  CHECK_FALSE(
      probe::ParseXidMessage(std::string(probe::kMaxLogLine, ' ') + "NVRM: Xid (PCI:0000:01:00): 79, x"));
}

TEST_CASE("xid: kmsg records and text-log lines", "[unit][xid]") {
  auto r = probe::ParseKmsgRecord("4,2302,22859081860,-;NVRM: Xid (PCI:0000:01:00): 31, x");
  REQUIRE(r);
  CHECK(r->seq == 2302);
  CHECK(r->usec == 22859081860ull);
  CHECK(r->message.substr(0, 4) == "NVRM");
  CHECK(probe::ParseKmsgRecord("6,1,2,-,caller=T1;hello")->message == "hello");
  CHECK_FALSE(probe::ParseKmsgRecord(" SUBSYSTEM=pci"));
  CHECK_FALSE(probe::ParseKmsgRecord("a,1,2,-;x"));
  CHECK_FALSE(probe::ParseKmsgRecord("6,1;x"));
  CHECK(probe::KmsgTime(22859081860ull) == "22859.081860 s after boot");

  auto k = probe::ParseKernLogLine(
      "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>'");
  REQUIRE(k);
  CHECK(k->time == "Dec  2 11:38:47");
  CHECK(k->message.substr(0, 9) == "NVRM: Xid");
  k = probe::ParseKernLogLine("2026-05-18T03:10:44.120511+00:00 gpu-node-7 kernel: NVRM: Xid (x");
  REQUIRE(k);
  CHECK(k->time == "2026-05-18T03:10:44.120511+00:00");
  CHECK_FALSE(probe::ParseKernLogLine("Dec  2 11:38:49 worker4 systemd[1]: Started x"));
  CHECK(probe::IsBootMessage("Linux version 6.8.0-49-generic (buildd@lcy02)"));
}

TEST_CASE("xid: a kmsg ring read from the boot's first record", "[unit][xid]") {
  const sys::LogRead read = sys::ReadKmsg(kXid + "/kmsg-boot", 1 << 20, 2000);
  REQUIRE(read.ok);
  probe::XidLog log;
  probe::ScanKmsg(read.data, log);
  CHECK(log.from_boot);
  CHECK(log.oldest.empty());
  REQUIRE(log.events.size() == 7);
  CHECK(log.events[0].code == 62);
  CHECK(log.events[0].time == "14370.687545 s after boot");
  CHECK(log.events[2].code == 31);
  CHECK(log.events[6].code == 79);
  CHECK(log.events[6].pci == "0000:44:00");
}

TEST_CASE("xid: a wrapped ring says since when", "[unit][xid]") {
  probe::XidLog log;
  probe::ScanKmsg(Fixture("kmsg-wrapped"), log);
  CHECK_FALSE(log.from_boot);
  CHECK(log.oldest == "81234.567890 s after boot");
  REQUIRE(log.events.size() == 4);
  CHECK(log.events[0].code == 94);
  CHECK(log.events[1].pci == "0018:01:00");
}

TEST_CASE("xid: events beyond the bound are counted, not kept", "[unit][xid]") {
  std::string data;
  for (size_t i = 0; i < probe::kMaxXidEvents + 5; ++i)
    data += "4," + std::to_string(i + 1) + ",1,-;NVRM: Xid (PCI:0000:01:00): 13, x\n";
  probe::XidLog log;
  probe::ScanKmsg(data, log);
  CHECK(log.events.size() == probe::kMaxXidEvents);
  CHECK(log.dropped == 5);
}

TEST_CASE("xid: the readers: a missing ring, a text log's tail", "[unit][xid]") {
  const sys::LogRead none = sys::ReadKmsg(kXid + "/no-such-ring", 1024, 100);
  CHECK_FALSE(none.ok);
  CHECK(none.error == "cannot read " + kXid + "/no-such-ring: No such file or directory");
  const sys::LogRead tail = sys::ReadTail(kXid + "/root/var/log/kern.log", 300);
  REQUIRE(tail.ok);
  CHECK(tail.truncated);
  CHECK(tail.data.rfind("Dec  2 11:38:4", 0) == 0);  // starts at a whole line
  CHECK(tail.data.size() <= 300);
  CHECK_FALSE(sys::ReadTail(kXid + "/root/var/log", 300).ok);  // a directory
}

TEST_CASE("xid: --root reads kern.log and its rotation, from the last boot on", "[unit][xid]") {
  sys::DiskFs fs(kXid + "/root");
  probe::ProbeEnv env;
  env.fs = &fs;
  probe::HostFacts h = WithGpusAt({"0000:07:00.0"});
  probe::ProbeXid(env, h);
  REQUIRE(h.xid.read);
  CHECK(h.xid.sources == std::vector<std::string>{"/var/log/kern.log", "/var/log/kern.log.1"});
  CHECK(h.xid.from_boot);
  REQUIRE(h.xid.events.size() == 2);  // the earlier boot's Xid 79 is not this boot's
  CHECK(h.xid.events[0].code == 48);
  CHECK(h.xid.events[0].time == "Dec  2 11:38:47");
  CHECK(h.xid.events[1].code == 64);
}

TEST_CASE("xid: --root without a boot record says since when; without logs it skips", "[unit][xid]") {
  sys::DiskFs fs(kXid + "/root-wrapped");
  probe::ProbeEnv env;
  env.fs = &fs;
  probe::HostFacts h = WithGpusAt({"0000:dc:00.0"});
  probe::ProbeXid(env, h);
  REQUIRE(h.xid.read);
  CHECK(h.xid.sources == std::vector<std::string>{"/var/log/syslog"});
  CHECK_FALSE(h.xid.from_boot);
  CHECK(h.xid.oldest == "2026-05-18T03:10:44.120511+00:00");
  CHECK(h.xid.events.size() == 2);

  sys::DiskFs empty(kXid + "/no-such-tree");
  env.fs = &empty;
  probe::HostFacts none = WithGpusAt({"0000:dc:00.0"});
  probe::ProbeXid(env, none);
  CHECK_FALSE(none.xid.read);
  CHECK(none.xid.skip_reason == "no kernel text log under the tree (/var/log/kern.log, /var/log/syslog)");
}

TEST_CASE("xid: a real H200 machine's ring, read by cat /dev/kmsg: from the boot, no events", "[unit][xid]") {
  // tests/fixtures/device/h200/kmsg.txt: 26 KB of records, the first one the boot's own "Linux version".
  const sys::LogRead read = sys::ReadKmsg(std::string(GP_FIXTURES) + "/device/h200/kmsg.txt", 1 << 20, 2000);
  REQUIRE(read.ok);
  probe::XidLog log;
  probe::ScanKmsg(read.data, log);
  CHECK(log.from_boot);
  CHECK(log.events.empty());
  CHECK(log.dropped == 0);
}
