// What the planner reads of the host beyond HostFacts, through the Fs: the dpkg database (the status file
// and the updates/ journal, the one reader of both), the loaded nvidia module, units wanted by a systemd
// target, and the container toolkit's files. The probe's dpkg step and the plan's host state
// (plan/host_state.h) are both made with these.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "probe/parsers.h"
#include "sys/fs.h"

namespace gp::probe {

// The dpkg database as dpkg would read it: /var/lib/dpkg/status, then the records of the updates/ journal
// (files named by digits, in numeric order), which are newer than the status file and supersede it.
struct DpkgDatabase {
  bool status_found = false;       // /var/lib/dpkg/status could be read
  std::vector<DpkgEntry> entries;  // the status file's stanzas in file order, then the journal's records
  size_t journal_from = 0;         // entries[journal_from..] came from updates/
  std::vector<std::string> journal_files;  // the journal's files (absolute paths), in numeric order
  std::vector<std::string> empty_journal;  // ... those with no record (a write dpkg did not finish)
  // dpkg was interrupted: updates/ holds journal files, and `dpkg --configure -a` must run first.
  bool journal_pending() const { return !journal_files.empty(); }
  bool from_journal(size_t i) const { return i >= journal_from; }
};
DpkgDatabase ReadDpkgDatabase(const sys::Fs& fs);

// The loaded nvidia module's version from /proc/driver/nvidia/version (both NVRM formats) or
// /sys/module/nvidia/version; nullopt when no module is loaded.
std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs);

// A "blacklist nouveau" line in /etc/modprobe.d, /lib/modprobe.d or /usr/lib/modprobe.d (*.conf).
bool NouveauBlacklisted(const sys::Fs& fs);

// Every unit some target wants: the entries of /etc/systemd/system/<target>.wants/.
std::set<std::string> WantedUnits(const sys::Fs& fs);
bool UnitEnabled(const sys::Fs& fs, const std::string& unit);  // one of WantedUnits

// The apt list files (sources.list and sources.list.d/*.list) with an active line for NVIDIA's
// experimental toolkit channel (libnvidia-container/experimental).
std::vector<std::string> ExperimentalToolkitLists(const sys::Fs& fs);

// The `mode` of [nvidia-container-runtime] in /etc/nvidia-container-runtime/config.toml; "" when unset.
std::string ToolkitRuntimeMode(const sys::Fs& fs);
std::string ParseToolkitRuntimeMode(const std::string& config_toml);

}  // namespace gp::probe
