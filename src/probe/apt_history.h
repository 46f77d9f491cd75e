// Who moved a package: apt's own record of each run, /var/log/apt/history.log and its monthly rotations
// (history.log.1.gz ...). An entry, as apt writes it:
//
//   Start-Date: 2024-06-11  06:38:04
//   Commandline: /usr/bin/unattended-upgrade
//   Requested-By: ubuntu (1000)          (only when run through sudo)
//   Install: linux-image-6.8.0-62-generic:amd64 (6.8.0-62.65~22.04.1, automatic), ...
//   Upgrade: libnvidia-compute-535:amd64 (535.171.04-0ubuntu0.22.04.1, 535.183.01-0ubuntu0.22.04.1), ...
//   Error: Sub-process /usr/bin/dpkg returned an error code (1)
//   End-Date: 2024-06-11  06:38:41
//
// The parser is pure; ProbeAptHistory (steps.h) reads the files, bounded, and asks only what doctor will
// say: the run that installed each kernel without a module, and the one that installed the userspace
// driver when the loaded module is another version.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "probe/host.h"

namespace gp::probe {

struct AptChange {
  std::string action;   // "Install", "Upgrade", "Downgrade", "Reinstall", "Remove", "Purge"
  std::string package;  // without its architecture: "libnvidia-compute-535"
  std::string version;  // the version it moved to (Remove and Purge: the one removed)
};

struct AptEntry {
  AptRun run;  // date, commandline, requested_by, unattended, where (no package yet)
  std::vector<AptChange> changes;
};

// Every entry of `text` (one history file), oldest first. `file` names the source in AptRun::where. Lines
// before the first Start-Date (a file read from its tail) and lines apt does not write are skipped; an
// entry without End-Date (apt killed) still counts; a package whose name or version is not valid is
// skipped. At most kMaxChangesPerEntry changes an entry.
std::vector<AptEntry> ParseAptHistory(std::string_view text, const std::string& file);
inline constexpr size_t kMaxChangesPerEntry = 4096;

// Whether `commandline` runs unattended-upgrades: its program (or, after an interpreter, its script) is
// unattended-upgrade or unattended-upgrades.
bool UnattendedCommandline(std::string_view commandline);

// The newest entry of `entries` (oldest first) that installed, upgraded, downgraded or reinstalled a package
// `wanted` accepts at the version it moved to; a run with no `found()` when none did.
template <typename Want>
AptRun NewestMove(const std::vector<AptEntry>& entries, Want wanted) {
  for (auto e = entries.rbegin(); e != entries.rend(); ++e)
    for (const AptChange& c : e->changes)
      if (c.action != "Remove" && c.action != "Purge" && wanted(c.package, c.version)) {
        AptRun r = e->run;
        r.action = c.action;
        r.package = c.package;
        r.version = c.version;
        return r;
      }
  return {};
}

// A Debian version's upstream part: no epoch, nothing from the last '-' ("1:535.183.01-0ubuntu1" ->
// "535.183.01").
std::string UpstreamVersion(std::string_view debian_version);

}  // namespace gp::probe
