#include "apt/dpkg_status.h"

#include "util/strings.h"

namespace gp::apt {

DpkgEntry EntryOf(const probe::DpkgEntry& e) {
  auto words = SplitWords(e.status);
  DpkgEntry entry;
  entry.version = e.version;
  entry.held = !words.empty() && words[0] == "hold";
  entry.installed = words.size() == 3 && words[1] == "ok" && words[2] == "installed";
  return entry;
}

std::map<std::string, DpkgEntry> DpkgEntries(const probe::DpkgDatabase& db,
                                             const std::set<std::string>* names) {
  std::map<std::string, DpkgEntry> out;
  for (const auto& e : db.entries)
    if (!names || names->count(e.package)) out[e.package] = EntryOf(e);
  return out;
}

std::map<std::string, DpkgEntry> ParseDpkgStatus(const std::string& text,
                                                 const std::set<std::string>& names) {
  probe::DpkgDatabase db;
  db.entries = probe::ParseDpkgStatus(text);  // the probe's stanza scanner
  return DpkgEntries(db, &names);
}

std::map<std::string, DpkgEntry> ReadDpkgStatus(const sys::Fs& fs, const std::set<std::string>& names) {
  return DpkgEntries(probe::ReadDpkgDatabase(fs), &names);
}

}  // namespace gp::apt
