#include "apt/preferences.h"

#include <algorithm>

#include "util/strings.h"

namespace gp::apt {
namespace {
constexpr std::string_view kLayersLine = "Explanation: gpuprep layers:";
}  // namespace

std::string PreferencesContents(const std::string& stack, const std::map<std::string, Pin>& pins) {
  std::string out = "# gpuprep: the packages of stack " + stack +
                    " at their exact versions (do not edit; gpuprep apply\n"
                    "# rewrites it, and `gpuprep apply` with another stack replaces it). Priority " +
                    std::to_string(kPinPriority) +
                    " > 1000: apt takes these\n"
                    "# versions from any origin, and upgrades cannot move them.\n";
  for (const auto& [name, pin] : pins) {
    out += "\n";
    if (!pin.layers.empty()) out += std::string(kLayersLine) + " " + Join(pin.layers, ", ") + "\n";
    out += "Package: " + name + "\nPin: version " + pin.version +
           "\nPin-Priority: " + std::to_string(kPinPriority) + "\n";
  }
  return out;
}

std::map<std::string, Pin> ReadPins(const std::string& text) {
  std::map<std::string, Pin> out;
  std::string name;
  Pin pin;
  auto flush = [&] {
    if (!name.empty() && !pin.version.empty() && name.find_first_of(" *") == std::string::npos) {
      std::sort(pin.layers.begin(), pin.layers.end());
      out[name] = pin;
    }
    name.clear();
    pin = Pin{};
  };
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    if (StartsWith(line, kLayersLine)) {
      for (const auto& l : Split(std::string(line.substr(kLayersLine.size())), ','))
        if (!Trim(l).empty()) pin.layers.emplace_back(Trim(l));
    } else if (StartsWith(line, "Package:")) {
      name = std::string(Trim(line.substr(8)));
    } else if (StartsWith(line, "Pin: version ")) {
      pin.version = std::string(Trim(line.substr(13)));
    }
  }
  flush();
  return out;
}

std::map<std::string, std::string> ParsePreferences(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& [name, pin] : ReadPins(text)) out[name] = pin.version;
  return out;
}

}  // namespace gp::apt
