// Helpers shared by the Engine API client's files (engine.cc, engine_stream.cc); not for other folders.
#pragma once
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "docker/engine.h"

namespace gp::docker::detail {

inline constexpr auto kQuick = std::chrono::milliseconds(5000);

inline EngineError ErrorOf(const sys::HttpResponse& r) {
  EngineError e;
  e.status = r.status;
  e.message = r.error.empty() ? EngineMessage(r) : r.error;
  return e;
}

// The string at `key` of an answer's object; "" when absent or of another type (the engine is outside input).
inline std::string Text(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A container id as the engine writes it: lower-case hex, 12 to 64 digits.
inline bool ValidContainerId(const std::string& id) {
  return id.size() >= 12 && id.size() <= 64 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace gp::docker::detail
