// The dpkg database read directly (no dpkg-query process): installed versions and holds of named
// packages, and whether dpkg was interrupted.
#pragma once
#include <map>
#include <set>
#include <string>

#include "sys/fs.h"

namespace gp::apt {

struct DpkgEntry {
  std::string version;     // "535.129.03-1"
  bool installed = false;  // Status: "<want> ok installed"
  bool held = false;       // want state "hold" (apt-mark hold)
};

// Entries of /var/lib/dpkg/status for the packages in `names` (others are not kept). Missing file: {}.
std::map<std::string, DpkgEntry> ReadDpkgStatus(const sys::Fs& fs, const std::set<std::string>& names);

// Parses status-file text (exposed for tests).
std::map<std::string, DpkgEntry> ParseDpkgStatus(const std::string& text, const std::set<std::string>& names);

// True when /var/lib/dpkg/updates holds pending entries: dpkg was interrupted and
// `dpkg --configure -a` must run before apt can install anything.
bool DpkgInterrupted(const sys::Fs& fs);

}  // namespace gp::apt
