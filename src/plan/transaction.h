// The one apt transaction of a plan, as a value: the closure of the run's packages through the index, the
// pins (plan/pins.h: which layer owns each), the holds to set and release, and gpuprep's preferences file.
// Pure.
#pragma once
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apt/index.h"
#include "plan/packages.h"

namespace gp::plan {

struct TransactionInput {
  const PackageState* state = nullptr;
  const apt::Index* index = nullptr;  // nullptr: resolved at apply time
  std::vector<PackageRoot> roots;     // the run's layers' own packages at exact versions
  std::vector<std::string> install;   // the install words the layers need
  std::set<std::string> left_alone;   // the stack's layers the run does not select
  std::string stack;                  // named in the preferences file
};

struct Transaction {
  std::vector<std::string> install;                       // the layers' words, then the closure's
  std::vector<std::string> hold, unhold;                  // apt-mark hold / unhold
  bool allow_held = false;                                // --allow-change-held-packages
  std::vector<std::pair<std::string, std::string>> pins;  // every package pinned, name -> version
  std::string preferences;                                // the preferences file wanted ("" = unchanged)
  bool needs_index = false;                               // apply must fetch the index to decide
  std::vector<std::string> blockers;                      // "apt: ..." (an unresolvable closure, a conflict)
};

// Every package the selected layers install or keep, at exact versions (the closure through the index),
// each naming the layers that need it; then the pins of the layers this run leaves alone, kept as they
// are (plan/pins.h); then what must change so that each of the run's packages is pinned and held.
Transaction DecideTransaction(const TransactionInput& in);

}  // namespace gp::plan
