#include "apt/dpkg_status.h"

#include "util/strings.h"

namespace gp::apt {

std::map<std::string, DpkgEntry> ParseDpkgStatus(const std::string& text, const std::set<std::string>& names) {
  std::map<std::string, DpkgEntry> out;
  std::string package;
  DpkgEntry entry;
  auto flush = [&] {
    if (!package.empty() && names.count(package)) out[package] = entry;
    package.clear();
    entry = DpkgEntry{};
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) {
      flush();
      if (nl == text.size()) break;
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation of a multi-line field
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string value(Trim(line.substr(colon + 1)));
    if (key == "Package") {
      package = value;
    } else if (key == "Version") {
      entry.version = value;
    } else if (key == "Status") {
      auto words = SplitWords(value);
      entry.held = !words.empty() && words[0] == "hold";
      entry.installed = words.size() == 3 && words[1] == "ok" && words[2] == "installed";
    }
    if (nl == text.size()) {
      flush();
      break;
    }
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
