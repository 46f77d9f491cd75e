// The one exception redist/ throws for hostile or unusable input (a bad JSON, a refused archive entry).
#pragma once
#include <stdexcept>
#include <string>

namespace gp::redist {

struct RedistError : std::runtime_error {
  explicit RedistError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gp::redist
