// gpuprep's apt preferences file: every package of the stack's layers pinned at its exact version with a
// priority above 1000, whatever its origin, so `apt-get install` takes those versions although newer ones
// sit in NVIDIA's repository or the distribution's updates, and `apt-get upgrade` / unattended-upgrades
// cannot move them (apt_preferences(5)).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gp::apt {

inline constexpr const char* kPreferencesPath = "/etc/apt/preferences.d/gpuprep";
inline constexpr int kPinPriority = 1001;

// The whole file for `packages` (name, exact version), naming the stack in its header.
std::string PreferencesContents(const std::string& stack, const std::vector<std::pair<std::string, std::string>>& packages);

// The (name -> version) pins of a preferences file gpuprep wrote; stanzas it cannot read are ignored.
std::map<std::string, std::string> ParsePreferences(const std::string& text);

}  // namespace gp::apt
