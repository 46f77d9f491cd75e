// Lookups the plan tests share: the step ids in order, a step by id, a layer's decision by name.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace gp::test {

inline std::vector<std::string> Ids(const plan::Plan& p) {
  std::vector<std::string> out;
  for (const auto& s : p.steps) out.push_back(s.id);
  return out;
}

// nullptr when the plan has no step with that id.
inline const plan::Step* Find(const plan::Plan& p, const std::string& id) {
  for (const auto& s : p.steps)
    if (s.id == id) return &s;
  return nullptr;
}

// Throws when the plan has no such layer (the test fails with the name).
inline const plan::LayerDecision& Layer(const plan::Plan& p, const std::string& name) {
  for (const auto& l : p.layers)
    if (l.name == name) return l;
  throw std::logic_error("no layer " + name);
}

}  // namespace gp::test
