#include "plan/transaction.h"

#include <algorithm>
#include <map>

#include "apt/resolve.h"
#include "plan/pins.h"

namespace gp::plan {
namespace {

// The roots of `layer` ("" = of every layer in the run) as (name, version) pairs.
std::vector<std::pair<std::string, std::string>> RootPairs(const std::vector<PackageRoot>& roots,
                                                           const std::string& layer) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : roots)
    if (layer.empty() || r.layer == layer) out.emplace_back(r.name, r.version);
  return out;
}

// Everything is installed: gpuprep's own preferences, if they cover these packages at their installed
// versions, are still the closure it computed when it installed them.
bool PinsCoverInstalled(const PackageState& state, const std::vector<PackageRoot>& roots) {
  bool covered = !state.pins.empty();
  for (const auto& r : roots) {
    auto it = state.pins.find(r.name);
    covered = covered && it != state.pins.end() && it->second.version == r.version;
  }
  for (const auto& [name, pin] : state.pins) {
    const std::string* have = state.Installed(name);
    covered = covered && have && *have == pin.version;
  }
  return covered;
}

}  // namespace

Transaction DecideTransaction(const TransactionInput& in) {
  Transaction t;
  t.install = in.install;
  if (in.roots.empty() && in.install.empty()) return t;
  const PackageState& state = *in.state;
  std::map<std::string, apt::Pin> want;
  if (in.index) {
    auto closure = apt::ComputeClosure(*in.index, state.installed, RootPairs(in.roots, ""));
    if (!closure.ok()) {
      t.blockers.push_back("apt: " + closure.error);
      return t;
    }
    for (const auto& [name, version] : closure.packages) want[name].version = version;
    // Which layers each package serves: each layer's own closure (names only; the versions are the run's).
    std::set<std::string> layers;
    for (const auto& r : in.roots) layers.insert(r.layer);
    for (const auto& layer : layers) {
      auto own = apt::ComputeClosure(*in.index, state.installed, RootPairs(in.roots, layer));
      for (const auto& [name, version] : own.packages)
        if (auto it = want.find(name); it != want.end()) it->second.layers.push_back(layer);
    }
  } else if (in.install.empty()) {
    if (!PinsCoverInstalled(state, in.roots)) {
      t.needs_index = true;
      return t;
    }
    want = state.pins;
  } else {
    return t;  // resolved at apply time
  }
  const PinDecision pins = DecidePins(want, state.pins, in.left_alone);
  for (const auto& c : pins.conflicts)
    t.blockers.push_back("apt: " + c +
                         " (include both layers with --only, or run apply without --only/--skip)");
  for (const auto& [name, pin] : pins.file) t.pins.emplace_back(name, pin.version);
  for (const auto& name : pins.managed) {
    const std::string& version = pins.file.at(name).version;
    auto it = state.dpkg.find(name);
    const bool at_pin = it != state.dpkg.end() && it->second.installed && it->second.version == version;
    // Every package of the closure that is not at its version is named on the install line with it: apt
    // gives up an installed package of another branch (or flavour) only for packages it is asked for.
    const std::string word = name + "=" + version;
    if (!at_pin && std::find(t.install.begin(), t.install.end(), word) == t.install.end())
      t.install.push_back(word);
    if (!at_pin || !it->second.held) t.hold.push_back(name);
    if (it != state.dpkg.end() && it->second.held && !at_pin) t.allow_held = true;
  }
  // gpuprep's earlier pins that no layer still owns at their version (a stack change) are released first.
  for (const auto& name : pins.released)
    if (state.Held(name)) t.unhold.push_back(name);
  if (!t.unhold.empty()) t.allow_held = true;
  t.preferences = apt::PreferencesContents(in.stack, pins.file);
  return t;
}

}  // namespace gp::plan
