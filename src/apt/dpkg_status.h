// The dpkg database read directly (no dpkg-query process): installed versions and holds of named
// packages, from probe/state.h's one reader of the status file and its updates/ journal.
#pragma once
#include <map>
#include <set>
#include <string>

#include "probe/state.h"
#include "sys/fs.h"

namespace gp::apt {

struct DpkgEntry {
  std::string version;     // "535.129.03-1"
  bool installed = false;  // Status: "<want> ok installed"
  bool held = false;       // want state "hold" (apt-mark hold)
};

// One stanza's state.
DpkgEntry EntryOf(const probe::DpkgEntry& e);

// The entries of a dpkg database by name (the last record of a name wins: a journal record supersedes the
// status file's stanza); only `names` when given.
std::map<std::string, DpkgEntry> DpkgEntries(const probe::DpkgDatabase& db,
                                             const std::set<std::string>* names = nullptr);

// The entries for the packages in `names` (others are not kept), status file and journal. Missing file: {}.
std::map<std::string, DpkgEntry> ReadDpkgStatus(const sys::Fs& fs, const std::set<std::string>& names);

// Parses status-file text (exposed for tests).
std::map<std::string, DpkgEntry> ParseDpkgStatus(const std::string& text, const std::set<std::string>& names);

}  // namespace gp::apt
