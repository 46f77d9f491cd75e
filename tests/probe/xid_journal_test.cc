// The Xid history from the journal's export format (tests/fixtures/xid/journal-export: an earlier boot's
// Xid 79, this boot's record, a program's line quoting an Xid, Xid 48 and a binary-stored Xid 64).
#include <catch2/catch.hpp>
#include <chrono>

#include "apply/harness.h"
#include "probe/probe.h"
#include "probe/xid.h"
#include "support/fakes.h"
#include "sys/fs.h"

using namespace gp;

namespace {

std::string JournalExportFixture() {
  sys::DiskFs fs("/");
  return fs.Read(std::string(GP_FIXTURES) + "/xid/journal-export").value();
}

// The export from the entry whose MESSAGE starts with `message` on.
std::string JournalFrom(const std::string& data, const std::string& message) {
  const size_t at = data.find("MESSAGE=" + message);
  REQUIRE(at != std::string::npos);
  return data.substr(data.rfind("__CURSOR=", at));
}

}  // namespace

TEST_CASE("journal export: this boot's kernel Xid events, binary fields read, others' lines left",
          "[probe][xid][journal]") {
  probe::XidLog log;
  probe::ScanJournalExport(JournalExportFixture(), log);
  CHECK(log.notes.empty());
  CHECK(log.from_boot);
  CHECK(log.oldest.empty());
  REQUIRE(log.events.size() == 2);
  CHECK(log.events[0].code == 48);
  CHECK(log.events[0].pci == "0000:07:00");
  CHECK(log.events[0].time == "2024-12-02 11:38:47 UTC");
  CHECK(log.events[1].code == 64);
  CHECK(log.events[1].detail ==
        "Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on "
        "boot(0x00000000007fffa8).?");
}

TEST_CASE("journal export: without the boot's record, events since the oldest entry read",
          "[probe][xid][journal]") {
  probe::XidLog log;
  probe::ScanJournalExport(JournalFrom(JournalExportFixture(), "Command line:"), log);
  CHECK_FALSE(log.from_boot);
  CHECK(log.oldest == "2024-12-02 11:35:08 UTC");
  CHECK(log.events.size() == 2);
  // Only the earlier boot's entry: its Xid 79 is the history read, since its own time.
  probe::XidLog earlier;
  const std::string all = JournalExportFixture();
  probe::ScanJournalExport(all.substr(0, all.find("\n\n") + 2), earlier);
  REQUIRE(earlier.events.size() == 1);
  CHECK(earlier.events[0].code == 79);
  CHECK(earlier.oldest == earlier.events[0].time);
}

TEST_CASE("journal export: broken data ends the scan with the byte offset, keeping what came before",
          "[probe][xid][journal]") {
  const std::string all = JournalExportFixture();
  SECTION("cut inside the binary field") {
    probe::XidLog log;
    probe::ScanJournalExport(all.substr(0, all.rfind("MESSAGE\n") + 8 + 8 + 10), log);
    REQUIRE(log.notes.size() == 1);
    CHECK(log.notes[0].rfind("journal export: byte ", 0) == 0);
    CHECK(log.notes[0].find("a binary field's size past the end") != std::string::npos);
    REQUIRE(log.events.size() == 1);
    CHECK(log.events[0].code == 48);
  }
  SECTION("a size field claiming more than there is") {
    const std::string bad = "_TRANSPORT=kernel\nMESSAGE\n" +
                            std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) +
                            "NVRM: Xid (PCI:0000:07:00): 79, x\n\n";
    probe::XidLog log;
    probe::ScanJournalExport(bad, log);
    CHECK(log.notes ==
          std::vector<std::string>{"journal export: byte 26: a binary field's size past the end"});
    CHECK(log.events.empty());
  }
  SECTION("a line that is no field") {
    CHECK(probe::ForEachJournalEntry("MESSAGE=a\nnot a field\n\n", [](const probe::JournalEntry&) {}) ==
          "journal export: byte 10: not a field name");
    CHECK(probe::ForEachJournalEntry("MESSAGE=a", [](const probe::JournalEntry&) {}) ==
          "journal export: byte 0: a field without its newline");
    CHECK(probe::ForEachJournalEntry("", [](const probe::JournalEntry&) {}).empty());
  }
}

TEST_CASE("journal: --since takes dates, today, yesterday and spans back, nothing else",
          "[probe][xid][journal]") {
  for (const char* ok : {"2024-12-02", "2024-12-02 11:00", "2024-12-02 11:00:59", "today", "yesterday", "-6h",
                         "-30min", "-2d", "-1w", "-999999s"})
    CHECK(probe::ValidJournalSince(ok));
  for (const char* bad :
       {"", "now", "tomorrow", "-h", "-1234567h", "-6 h", "6h", "+6h", "-6hours", "2024-12-2",
        "2024-12-02T11:00", "2024-12-02 11", "2024-12-02 11:00:5", "2024-12-02 11:00;rm", "--all", "today\n"})
    CHECK_FALSE(probe::ValidJournalSince(bad));
}

TEST_CASE("journal: doctor --since reads the live journal through the runner, earlier boots included",
          "[probe][xid][journal]") {
  sys::DiskFs live("/");
  test::FakeCommandRunner runner;
  runner.strict = true;
  probe::ProbeEnv env;
  env.fs = &live;
  env.runner = &runner;
  probe::HostFacts facts;
  facts.xid.read = true;
  facts.xid.sources = {"/dev/kmsg"};
  facts.xid.oldest = "1234.000000 s after boot";
  SECTION("the export replaces the ring buffer's history") {
    runner.On("journalctl -k -o export --no-pager --since=yesterday", test::Exit(0, JournalExportFixture()));
    probe::ProbeXidJournal(env, "yesterday", facts);
    REQUIRE(runner.calls.size() == 1);
    CHECK(runner.calls[0].max_output == 64u << 20);
    CHECK(runner.calls[0].timeout == std::chrono::seconds(20));
    CHECK(facts.xid.sources == std::vector<std::string>{"journalctl -k --since=yesterday"});
    CHECK(facts.xid.from_boot);  // the window holds an earlier boot: it reaches back past this boot's start
    CHECK(facts.xid.oldest == "2024-12-01 10:23:32 UTC");
    REQUIRE(facts.xid.events.size() == 3);
    CHECK(facts.xid.events[0].code == 79);  // the earlier boot's, which the ring buffer no longer holds
    CHECK(facts.xid.notes.empty());
  }
  SECTION("a journal that cannot be read leaves the ring buffer's history, saying why") {
    runner.On("journalctl", test::Exit(1, "", "No journal files were found.\n-- No entries --\n"));
    probe::ProbeXidJournal(env, "today", facts);
    CHECK(facts.xid.sources == std::vector<std::string>{"/dev/kmsg"});
    CHECK(facts.xid.notes ==
          std::vector<std::string>{"journalctl -k --since=today: exit 1 (No journal files were found.)"});
  }
  SECTION("unreadable ring buffer and no journalctl: a skip with both reasons") {
    facts.xid = {};
    facts.xid.skip_reason = "cannot read /dev/kmsg: Operation not permitted";
    runner.strict = true;  // no rule: not found
    probe::ProbeXidJournal(env, "-6h", facts);
    CHECK_FALSE(facts.xid.read);
    CHECK(facts.xid.skip_reason ==
          "cannot read /dev/kmsg: Operation not permitted; journalctl -k --since=-6h: not found "
          "(FakeCommandRunner: unexpected command: journalctl -k -o export --no-pager --since=-6h)");
  }
  SECTION("under --root nothing is run") {
    test::TempRoot root;
    env.fs = &root.fs();
    probe::ProbeXidJournal(env, "today", facts);
    CHECK(runner.calls.empty());
    CHECK(facts.xid.notes == std::vector<std::string>{"binary journal not read under --root"});
  }
}
