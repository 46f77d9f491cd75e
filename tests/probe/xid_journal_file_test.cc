// The journal's export format as systemd's own journalctl prints it from a journal file that systemd's own
// writer made (systemd-journal-remote, from tests/fixtures/xid/journal-export). Hidden ([.]):
// tests/integration/differential_journal.sh writes the file, runs journalctl on it and runs this case with
// GPUPREP_JOURNAL_DIR holding what journalctl printed:
//   all.export   journalctl --file F -o export
//   all.json     journalctl --file F -o json (one entry a line: the reference reading of the same entries)
//   boot.export  journalctl --file F -k -b -o export --no-pager (what the live-host reader runs, on that
//   file)
#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "probe/probe.h"
#include "probe/xid.h"
#include "support/fakes.h"
#include "sys/fs.h"

using namespace gp;

namespace {

std::string ReadJournalOutput(const std::string& name) {
  const char* dir = std::getenv("GPUPREP_JOURNAL_DIR");
  REQUIRE(dir != nullptr);
  sys::DiskFs fs("/");
  auto data = fs.Read(std::string(dir) + "/" + name);
  REQUIRE(data.has_value());
  return *data;
}

// A json field's bytes: journalctl prints a value as a string, or as an array of byte values when it is not
// printable UTF-8.
std::string Bytes(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  for (const auto& b : v) out += static_cast<char>(b.get<int>());
  return out;
}

probe::HostFacts ProbeWithStandIn(const std::string& export_out, const std::string& since) {
  sys::DiskFs live("/");
  test::FakeCommandRunner runner;
  runner.strict = true;
  runner.On(since.empty() ? "journalctl -k -o export --no-pager -b"
                          : "journalctl -k -o export --no-pager --since=" + since,
            test::Exit(0, export_out));
  probe::ProbeEnv env;
  env.fs = &live;
  env.runner = &runner;
  probe::HostFacts facts;
  probe::ProbeXidJournal(env, since, facts);
  REQUIRE(runner.calls.size() == 1);
  return facts;
}

std::string Describe(const probe::XidLog& log) {
  std::ostringstream o;
  o << "from_boot=" << log.from_boot << " oldest=" << log.oldest << " dropped=" << log.dropped << "\n";
  for (const auto& e : log.events) o << e.code << " " << e.pci << " " << e.time << " " << e.detail << "\n";
  for (const auto& n : log.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace

TEST_CASE("journal export from systemd's own journalctl: every entry read as journalctl's json reads it",
          "[.][journal-file]") {
  const std::string exported = ReadJournalOutput("all.export");
  std::vector<probe::JournalEntry> entries;
  std::vector<std::string> messages;  // the views point into `exported`
  CHECK(probe::ForEachJournalEntry(exported, [&](const probe::JournalEntry& e) {
          entries.push_back(e);
          messages.emplace_back(e.message);
        }) == "");
  std::vector<nlohmann::json> reference;
  std::istringstream lines(ReadJournalOutput("all.json"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) reference.push_back(nlohmann::json::parse(line));
  // The fixture's 7 entries, all kept by systemd-journal-remote.
  REQUIRE(reference.size() == 7);
  REQUIRE(entries.size() == reference.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& ref = reference[i];
    INFO("entry " << i << ": " << ref.dump().substr(0, 300));
    CHECK(std::to_string(entries[i].realtime_usec) == ref.at("__REALTIME_TIMESTAMP").get<std::string>());
    CHECK(std::to_string(entries[i].monotonic_usec) == ref.at("__MONOTONIC_TIMESTAMP").get<std::string>());
    CHECK(std::string(entries[i].boot_id) == ref.at("_BOOT_ID").get<std::string>());
    CHECK(messages[i] == Bytes(ref.at("MESSAGE")));
    CHECK(entries[i].kernel == (ref.at("_TRANSPORT").get<std::string>() == "kernel"));
  }
  // The Xid 64 line carries a control character: journalctl prints it as a binary field, and both read it
  // whole.
  CHECK(exported.find("MESSAGE\n") != std::string::npos);
  CHECK(reference.back().at("MESSAGE").is_array());
  CHECK(messages.back().back() == '\x1b');
}

TEST_CASE("journal export from systemd's own journalctl: the live-host reader's history, as from the fixture",
          "[.][journal-file]") {
  sys::DiskFs fs("/");
  const std::string fixture = fs.Read(std::string(GP_FIXTURES) + "/xid/journal-export").value();

  SECTION("this boot (journalctl -k -b), as doctor --health reads it") {
    const probe::HostFacts facts = ProbeWithStandIn(ReadJournalOutput("boot.export"), "");
    const probe::XidLog& log = facts.xid;
    CHECK(log.sources == std::vector<std::string>{"journalctl -k -b"});
    CHECK(log.from_boot);
    REQUIRE(log.events.size() == 2);
    CHECK(log.events[0].code == 48);
    CHECK(log.events[0].pci == "0000:07:00");
    CHECK(log.events[0].time == "2024-12-02 11:38:47 UTC");
    CHECK(log.events[1].code == 64);
    // The same history as from the hand-written export of the same entries.
    CHECK(Describe(log) == Describe(ProbeWithStandIn(fixture, "").xid));
  }
  SECTION("every boot (journalctl -k --since), as doctor --since reads it") {
    const probe::HostFacts facts = ProbeWithStandIn(ReadJournalOutput("all.export"), "2024-12-01");
    const probe::XidLog& log = facts.xid;
    REQUIRE(log.events.size() == 3);
    CHECK(log.events[0].code == 79);
    CHECK(log.events[0].pci == "0000:44:00");
    CHECK(log.oldest == "2024-12-01 10:23:32 UTC");
    CHECK(Describe(log) == Describe(ProbeWithStandIn(fixture, "2024-12-01").xid));
  }
}
