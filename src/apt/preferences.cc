#include "apt/preferences.h"

#include "util/strings.h"

namespace gp::apt {

std::string PreferencesContents(const std::string& stack,
                                const std::vector<std::pair<std::string, std::string>>& packages) {
  std::string out =
      "# gpuprep: the packages of stack " + stack + " at their exact versions (do not edit; gpuprep apply\n"
      "# rewrites it, and `gpuprep apply` with another stack replaces it). Priority " +
      std::to_string(kPinPriority) + " > 1000: apt takes these\n"
      "# versions from any origin, and upgrades cannot move them.\n";
  for (const auto& [name, version] : packages)
    out += "\nPackage: " + name + "\nPin: version " + version + "\nPin-Priority: " + std::to_string(kPinPriority) + "\n";
  return out;
}

std::map<std::string, std::string> ParsePreferences(const std::string& text) {
  std::map<std::string, std::string> out;
  std::string name, version;
  auto flush = [&] {
    if (!name.empty() && !version.empty() && name.find_first_of(" *") == std::string::npos) out[name] = version;
    name.clear();
    version.clear();
  };
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    if (StartsWith(line, "Package:")) name = std::string(Trim(line.substr(8)));
    else if (StartsWith(line, "Pin: version ")) version = std::string(Trim(line.substr(13)));
  }
  flush();
  return out;
}

}  // namespace gp::apt
