// Who owns gpuprep's pins and holds. A run (`apply`, or `apply --only L` / `--skip L`) decides the pins of
// the layers it selects; the pins of the layers it leaves alone stay exactly as they are. A pin (and the hold
// that goes with it) is released only when no layer of the stack, in the run or left alone by it, still pins
// that package at that version. Pure.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "apt/preferences.h"

namespace gp::plan {

struct PinDecision {
  std::map<std::string, apt::Pin> file;  // the preferences file after the run
  std::set<std::string> managed;         // the packages the run itself installs at their pin and holds
  std::vector<std::string> released;     // earlier pins no layer still owns (their holds are released)
  std::vector<std::string> conflicts;    // a package the run would move that a layer left alone pins
};

// `want`: the pins the run's layers need (each naming those layers); `old`: the preferences file as it is;
// `left_alone`: the stack's layers the run does not select. An old pin without layers (a file written
// before gpuprep recorded them) may belong to any layer: kept while any layer is left alone. A package that
// a left-alone layer pins at another version than the run wants is a conflict (the run must include both).
PinDecision DecidePins(const std::map<std::string, apt::Pin>& want,
                       const std::map<std::string, apt::Pin>& old, const std::set<std::string>& left_alone);

}  // namespace gp::plan
