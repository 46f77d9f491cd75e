// The one reader of each host file fact both the probe (HostFacts) and the file half of the host
// (plan::HostState, read by host/files.h) hold: the dpkg database (the status file and the updates/ journal),
// the loaded nvidia module, nouveau (loaded, blacklisted), a pending reboot and the units some systemd target
// wants. A fact both hold is read by the function here, never by a second rule.
#pragma once
#include <map>
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

// The loaded nvidia module from /proc/driver/nvidia/version (both NVRM formats), else
// /sys/module/nvidia/version (version only); loaded=false when neither names a version.
KernelModule ReadLoadedModule(const sys::Fs& fs);
// Its version; nullopt when no module is loaded.
std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs);

// nouveau is loaded: /sys/module/nouveau exists.
bool NouveauLoaded(const sys::Fs& fs);
// A pending reboot: /run/reboot-required, or /var/run/reboot-required (a link to /run followed inside the
// root).
bool RebootRequired(const sys::Fs& fs);

// A "blacklist nouveau" line in /etc/modprobe.d, /lib/modprobe.d or /usr/lib/modprobe.d (*.conf).
bool NouveauBlacklisted(const sys::Fs& fs);

// Every unit enabled for some target: the entries of /etc/systemd/system/<target>.wants/ and
// <target>.requires/, where `systemctl enable` links a unit for its [Install] WantedBy= and RequiredBy=
// (systemd.unit(5)), whichever the target (multi-user.target, graphical.target, ...).
std::set<std::string> WantedUnits(const sys::Fs& fs);
bool UnitEnabled(const sys::Fs& fs, const std::string& unit);  // one of WantedUnits

// The `mode` of [nvidia-container-runtime] in a config.toml's text; "" when unset.
std::string ParseToolkitRuntimeMode(const std::string& config_toml);
// The texts (by path) that hold an active line for NVIDIA's experimental toolkit channel
// (libnvidia-container/experimental), in path order.
std::vector<std::string> ExperimentalToolkitLists(
    const std::map<std::string, std::optional<std::string>>& texts);

}  // namespace gp::probe
