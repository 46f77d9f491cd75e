// Who moved the kernel or the driver: apt's history (tests/fixtures/apt-history: an Ubuntu 22.04 HWE host
// where unattended-upgrades installed a kernel without headers and upgraded the userspace driver under the
// loaded module), parsed, read with its compressed rotation, and named in the driver layer's findings.
#include "probe/apt_history.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/driver/driver.h"
#include "layers/sample.h"
#include "probe/steps.h"
#include "sys/archive.h"

using namespace gp;

namespace {

const std::string kHistoryDir = std::string(GP_FIXTURES) + "/apt-history";

std::string HistoryFixture(const std::string& name) {
  sys::DiskFs fs("/");
  return fs.Read(kHistoryDir + "/" + name).value();
}

probe::InstalledKernel HistoryKernel(const std::string& release, bool module) {
  probe::InstalledKernel k;
  k.release = release;
  k.modules_dep = true;
  if (module) k.module_path = "updates/dkms/nvidia.ko.zst";
  return k;
}

// The host the recordings describe: 535.171.04 loaded, 535.183.01 installed; 6.8.0-60 with its module,
// 6.8.0-57 and 6.8.0-62 without one, 6.8.0-31 without one and never in the history.
probe::HostFacts HistoryHost() {
  probe::HostFacts h = test::HealthyH100Host();
  h.kernel = "6.8.0-60-generic";
  h.driver.module.loaded = true;
  h.driver.module.version = "535.171.04";
  h.driver.userspace_version = "535.183.01";
  h.boot.probed = true;
  h.boot.kernels = {HistoryKernel("6.8.0-31-generic", false), HistoryKernel("6.8.0-57-generic", false),
                    HistoryKernel("6.8.0-60-generic", true), HistoryKernel("6.8.0-62-generic", false)};
  return h;
}

void ProbeHistory(test::TempRoot& root, probe::HostFacts& facts) {
  probe::ProbeEnv env;
  env.fs = &root.fs();
  probe::ProbeAptHistory(env, facts);
}

const verdict::Finding* HistoryFinding(const verdict::LayerReport& r, const std::string& code,
                                       const std::string& part) {
  for (const auto& f : r.findings)
    if (f.code == code && f.message.find(part) != std::string::npos) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("apt history: entries as apt writes them, the mess included", "[probe][apt-history]") {
  const auto entries = probe::ParseAptHistory(HistoryFixture("history.log"), "/var/log/apt/history.log");
  REQUIRE(entries.size() == 4);
  const probe::AptEntry& driver = entries[0];
  CHECK(driver.run.date == "2024-07-01  06:12:40");
  CHECK(driver.run.commandline == "/usr/bin/unattended-upgrade");
  CHECK(driver.run.unattended);
  CHECK(driver.run.requested_by.empty());
  CHECK(driver.run.where == "/var/log/apt/history.log:2");
  REQUIRE(driver.changes.size() == 5);
  CHECK(driver.changes[2].package == "libnvidia-compute-535");  // the i386 one, its architecture dropped
  CHECK(driver.changes[2].action == "Upgrade");
  CHECK(driver.changes[2].version == "535.183.01-0ubuntu0.22.04.1");
  const probe::AptEntry& user = entries[1];
  CHECK(user.run.commandline == "apt install htop");
  CHECK_FALSE(user.run.unattended);
  CHECK(user.run.requested_by == "ubuntu (1000)");
  REQUIRE(entries[2].changes.size() == 4);
  CHECK(entries[2].changes[0].action == "Install");
  CHECK(entries[2].changes[0].version == "6.8.0-62.65~22.04.1");  // not "automatic"
  CHECK(entries[2].changes[3].action == "Upgrade");
  CHECK(entries[2].changes[3].version == "6.8.0-62.65~22.04.1");  // the new one
  // Cut short by dpkg's failure (no End-Date): it still counts; the escape is shown, not sent; the item no
  // package can be named after and the upgrade with one version are left out.
  const probe::AptEntry& cut = entries[3];
  CHECK(cut.run.requested_by == "ops\\e[31m (1001)");
  REQUIRE(cut.changes.size() == 1);
  CHECK(cut.changes[0].package == "cuda-drivers");
  CHECK(cut.changes[0].version == "535.183.06-1");
}

TEST_CASE("apt history: a file read from its tail starts at the first whole entry", "[probe][apt-history]") {
  const std::string text =
      "Upgrade: linux-image-6.8.0-62-generic:amd64 (1, 2)\nEnd-Date: 2024-07-09  06:26:48\n\n"
      "Start-Date: 2024-07-10  09:01:55\nCommandline: apt upgrade\n"
      "Install: linux-image-6.8.0-62-generic:amd64 (6.8.0-62.65~22.04.1)";
  const auto entries = probe::ParseAptHistory(text, "h");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].run.where == "h:4");
  REQUIRE(entries[0].changes.size() == 1);  // the last line has no newline
  CHECK(probe::ParseAptHistory("", "h").empty());
  CHECK(probe::ParseAptHistory("\n\nStart-Date\nCommandline: x\n", "h").empty());
}

TEST_CASE("apt history: unattended-upgrades is told by its program, not by a word anywhere",
          "[probe][apt-history]") {
  CHECK(probe::UnattendedCommandline("/usr/bin/unattended-upgrade"));
  CHECK(probe::UnattendedCommandline("/usr/bin/python3 /usr/bin/unattended-upgrade --dry-run"));
  CHECK(probe::UnattendedCommandline("unattended-upgrades -d"));
  CHECK_FALSE(probe::UnattendedCommandline("apt install unattended-upgrades"));
  CHECK_FALSE(probe::UnattendedCommandline("apt upgrade"));
  CHECK_FALSE(probe::UnattendedCommandline(""));
  CHECK(probe::UpstreamVersion("1:535.183.01-0ubuntu0.22.04.1") == "535.183.01");
  CHECK(probe::UpstreamVersion("535.183.01") == "535.183.01");
}

TEST_CASE("apt history: the run that moved each kernel and the driver, the compressed rotation included",
          "[probe][apt-history]") {
  test::TempRoot root;
  root.Write("/var/log/apt/history.log", HistoryFixture("history.log"));
  root.Write("/var/log/apt/history.log.1.gz", HistoryFixture("history.log.1.gz"));
  probe::HostFacts facts = HistoryHost();
  ProbeHistory(root, facts);
  CHECK(facts.probe_notes.empty());
  const probe::AptRun& k62 = facts.boot.kernels[3].installed_by;
  REQUIRE(k62.found());
  CHECK(k62.date == "2024-07-09  06:25:11");
  CHECK(k62.unattended);
  CHECK(k62.where == "/var/log/apt/history.log:13");
  const probe::AptRun& k57 = facts.boot.kernels[1].installed_by;  // from the gzip'ed June file
  REQUIRE(k57.found());
  CHECK(k57.commandline == "apt install --install-recommends linux-image-generic-hwe-22.04");
  CHECK(k57.requested_by == "ubuntu (1000)");
  CHECK_FALSE(k57.unattended);
  CHECK(k57.where == "/var/log/apt/history.log.1.gz:2");
  CHECK_FALSE(facts.boot.kernels[0].installed_by.found());  // never in the history: none is named
  CHECK_FALSE(facts.boot.kernels[2].installed_by.found());  // has its module: not asked
  const probe::AptRun& driver = facts.driver.userspace_moved_by;
  REQUIRE(driver.found());
  CHECK(driver.date == "2024-07-01  06:12:40");
  CHECK(driver.package == "libnvidia-compute-535");

  test::Inputs t;
  t.host = facts;
  const verdict::LayerReport r = layers::CheckDriver(t.in());
  const verdict::Finding* no_module =
      HistoryFinding(r, "driver.kernel-no-module", "installed kernel 6.8.0-62-generic ");
  REQUIRE(no_module);
  CHECK(no_module->message ==
        "installed kernel 6.8.0-62-generic has no nvidia module for this driver (its modules.dep lists no "
        "nvidia module; no headers for it, so DKMS cannot build one): it would boot without the GPU driver; "
        "apt installed linux-image-6.8.0-62-generic 6.8.0-62.65~22.04.1 on 2024-07-09 06:25:11, run by "
        "unattended-upgrades (Commandline: /usr/bin/unattended-upgrade; /var/log/apt/history.log:13)");
  const verdict::Finding* never =
      HistoryFinding(r, "driver.kernel-no-module", "installed kernel 6.8.0-31-generic ");
  REQUIRE(never);
  CHECK(never->message.find("apt ") == std::string::npos);
  const verdict::Finding* mismatch = HistoryFinding(r, "driver.module-mismatch", "");
  REQUIRE(mismatch);
  CHECK(
      mismatch->message ==
      "kernel module 535.171.04 != userspace driver 535.183.01 (\"Failed to initialize NVML: "
      "Driver/library version mismatch\"); apt upgraded libnvidia-compute-535 535.183.01-0ubuntu0.22.04.1 on "
      "2024-07-01 06:12:40, run by unattended-upgrades (Commandline: /usr/bin/unattended-upgrade; "
      "/var/log/apt/history.log:2)");
}

TEST_CASE("apt history: nothing to ask, nothing read; an unreadable rotation is a note, never a guess",
          "[probe][apt-history]") {
  test::TempRoot root;
  root.Write("/var/log/apt/history.log", HistoryFixture("history.log"));
  SECTION("a healthy host asks nothing") {
    probe::HostFacts facts = HistoryHost();
    facts.driver.userspace_version = "535.171.04";
    for (auto& k : facts.boot.kernels) k.module_path = "updates/dkms/nvidia.ko.zst";
    root.Write("/var/log/apt/history.log.1.gz", "not gzip");
    ProbeHistory(root, facts);
    CHECK(facts.probe_notes.empty());  // the broken rotation was never opened
  }
  SECTION("a corrupt rotation") {
    root.Write("/var/log/apt/history.log.1.gz", "\x1f\x8b garbage");
    probe::HostFacts facts = HistoryHost();
    ProbeHistory(root, facts);
    REQUIRE(facts.probe_notes.size() == 1);
    CHECK(facts.probe_notes[0].rfind("apt history: /var/log/apt/history.log.1.gz: ", 0) == 0);
    CHECK_FALSE(facts.boot.kernels[1].installed_by.found());
    CHECK(facts.boot.kernels[3].installed_by.found());
  }
}

TEST_CASE("gunzip: the newest part within the bound, from a line start", "[sys][archive]") {
  const std::string gz = HistoryFixture("history.log.1.gz");
  const sys::Gunzipped whole = sys::Gunzip(gz, 1 << 20);
  REQUIRE(whole.ok);
  CHECK_FALSE(whole.truncated);
  CHECK(whole.data.rfind("\nStart-Date: 2024-06-02  10:41:07\n", 0) == 0);
  const sys::Gunzipped tail = sys::Gunzip(gz, 200);
  REQUIRE(tail.ok);
  CHECK(tail.truncated);
  CHECK(tail.data.size() <= 200);
  CHECK(tail.data == whole.data.substr(whole.data.size() - tail.data.size()));
  CHECK(whole.data[whole.data.size() - tail.data.size() - 1] == '\n');
  CHECK(sys::Gunzip("plain text", 100).error == "not gzip data");
  CHECK_FALSE(sys::Gunzip(std::string("\x1f\x8b", 2), 100).ok);
}

// unattended-upgrades.log: written by real apt under Debian's own unattended-upgrades, which moved the driver
// an admin had installed with apt-get (tests/sim/make-apt-history.sh). Doctor names that run, not the
// admin's.
TEST_CASE("apt history: the run Debian's unattended-upgrades made, as apt wrote it, is named",
          "[probe][apt-history]") {
  const std::string text = HistoryFixture("unattended-upgrades.log");
  const auto entries = probe::ParseAptHistory(text, "/var/log/apt/history.log");
  REQUIRE(entries.size() == 3);
  CHECK_FALSE(entries[0].run.unattended);  // the admin's apt-get install
  CHECK(entries[1].run.commandline == "/usr/bin/unattended-upgrade -v");
  CHECK(entries[1].run.unattended);
  CHECK(entries[1].run.requested_by.empty());  // run as root by its timer, not through sudo
  REQUIRE(entries[1].changes.size() == 5);
  CHECK(entries[2].run.unattended);  // unattended-upgrades splits its work into minimal steps

  test::TempRoot root;
  root.Write("/var/log/apt/history.log", text);
  probe::HostFacts facts = test::HealthyH100Host();
  facts.driver.module.loaded = true;
  facts.driver.module.version = "535.129.03";
  facts.driver.userspace_version = "535.183.01";
  ProbeHistory(root, facts);
  const probe::AptRun& moved = facts.driver.userspace_moved_by;
  REQUIRE(moved.found());
  CHECK(moved.where == "/var/log/apt/history.log:6");
  CHECK(moved.package == "nvidia-driver-535");
  CHECK(moved.version == "535.183.01-0ubuntu1");

  test::Inputs t;
  t.host = facts;
  const verdict::LayerReport r = layers::CheckDriver(t.in());  // the finding lives in it
  const verdict::Finding* mismatch = HistoryFinding(r, "driver.module-mismatch", "");
  REQUIRE(mismatch);
  CHECK(mismatch->message.find(
            "; apt upgraded nvidia-driver-535 535.183.01-0ubuntu1 on 2026-12-05 02:46:13, run by "
            "unattended-upgrades (Commandline: /usr/bin/unattended-upgrade -v; "
            "/var/log/apt/history.log:6)") != std::string::npos);
}
