#include "apt/dpkg_status.h"

#include "probe/parsers.h"
#include "util/strings.h"

namespace gp::apt {

std::map<std::string, DpkgEntry> ParseDpkgStatus(const std::string& text,
                                                 const std::set<std::string>& names) {
  std::map<std::string, DpkgEntry> out;
  for (const auto& e : probe::ParseDpkgStatus(text)) {  // the probe's stanza scanner
    if (!names.count(e.package)) continue;
    auto words = SplitWords(e.status);
    DpkgEntry entry;
    entry.version = e.version;
    entry.held = !words.empty() && words[0] == "hold";
    entry.installed = words.size() == 3 && words[1] == "ok" && words[2] == "installed";
    out[e.package] = entry;
  }
  return out;
}

std::map<std::string, DpkgEntry> ReadDpkgStatus(const sys::Fs& fs, const std::set<std::string>& names) {
  auto text = fs.Read("/var/lib/dpkg/status");
  if (!text) return {};
  return ParseDpkgStatus(*text, names);
}

bool DpkgInterrupted(const sys::Fs& fs) {
  for (const auto& name : fs.List("/var/lib/dpkg/updates"))
    if (name.find_first_not_of("0123456789") == std::string::npos) return true;  // dpkg's journal files
  return false;
}

}  // namespace gp::apt
