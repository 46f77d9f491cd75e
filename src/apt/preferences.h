// gpuprep's apt preferences file: every package of the stack's layers pinned at its exact version with a
// priority above 1000, whatever its origin, so `apt-get install` takes those versions although newer ones
// sit in NVIDIA's repository or the distribution's updates, and `apt-get upgrade` / unattended-upgrades
// cannot move them (apt_preferences(5)). Each stanza names the layers that pin the package in an
// `Explanation:` line (apt_preferences(5), "Optional Lines in an APT Preferences Record": a place for
// comments), so a run that touches some layers knows which pins belong to the others.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace gp::apt {

inline constexpr const char* kPreferencesPath = "/etc/apt/preferences.d/gpuprep";
inline constexpr int kPinPriority = 1001;

// One package's pin and the layers that pin it (sorted; empty in a file written before layers were
// recorded: then any layer may own it).
struct Pin {
  std::string version;
  std::vector<std::string> layers;
  bool operator==(const Pin& o) const { return version == o.version && layers == o.layers; }
};

// The whole file for `pins` (name -> pin, written in name order), naming the stack in its header.
std::string PreferencesContents(const std::string& stack, const std::map<std::string, Pin>& pins);

// The pins of a preferences file gpuprep wrote, with their layers; stanzas it cannot read are ignored.
std::map<std::string, Pin> ReadPins(const std::string& text);

// The (name -> version) pins of a preferences file gpuprep wrote.
std::map<std::string, std::string> ParsePreferences(const std::string& text);

}  // namespace gp::apt
