#include "plan/pins.h"

#include <algorithm>

#include "util/strings.h"

namespace gp::plan {

PinDecision DecidePins(const std::map<std::string, apt::Pin>& want,
                       const std::map<std::string, apt::Pin>& old, const std::set<std::string>& left_alone) {
  PinDecision d;
  d.file = want;
  for (const auto& [name, pin] : want) d.managed.insert(name);
  for (const auto& [name, pin] : old) {
    // The layers left alone that own this pin ("" stands for an owner the file does not name).
    std::vector<std::string> owners;
    if (pin.layers.empty()) {
      if (!left_alone.empty()) owners.emplace_back("");
    } else {
      for (const auto& l : pin.layers)
        if (left_alone.count(l)) owners.push_back(l);
    }
    auto it = d.file.find(name);
    if (owners.empty()) {  // only the run's layers (or none) pinned it: the run decides
      if (it == d.file.end() || it->second.version != pin.version) d.released.push_back(name);
      continue;
    }
    const bool unnamed = owners.size() == 1 && owners[0].empty();
    if (it == d.file.end()) {  // the run does not need it; a layer left alone keeps it, as it is
      apt::Pin kept = pin;
      if (!unnamed) kept.layers = owners;
      d.file[name] = kept;
      continue;
    }
    if (it->second.version == pin.version) {  // both want it at this version: one pin, every owner named
      if (unnamed) continue;
      auto& layers = it->second.layers;
      layers.insert(layers.end(), owners.begin(), owners.end());
      std::sort(layers.begin(), layers.end());
      layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
      continue;
    }
    if (unnamed) {  // an unnamed owner: the run's layer is the one that names it now
      d.released.push_back(name);
      continue;
    }
    d.conflicts.push_back(name + " is pinned at " + pin.version + " for " + Join(owners, ", ") +
                          ", which this run leaves alone, but " + Join(it->second.layers, ", ") + " needs " +
                          it->second.version);
  }
  return d;
}

}  // namespace gp::plan
