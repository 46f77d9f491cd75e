// The rules both snapshot readers (snapshot.h) apply to what they read, in one place.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "fleet/model.h"
#include "layers/table.h"

namespace gp::fleet {

constexpr size_t kMaxFieldBytes = 4096;  // any string fleet-report reads from a snapshot

// fail 3, warn 2, ok 1, anything else (skip) 0.
inline int Rank(std::string_view status) {
  return status == "fail" ? 3 : status == "warn" ? 2 : status == "ok" ? 1 : 0;
}

inline bool ValidStatus(std::string_view s) { return s == "ok" || s == "warn" || s == "fail" || s == "skip"; }

// Findings the report lists: warn and fail.
inline bool Reported(std::string_view status) { return status == "warn" || status == "fail"; }

// A finding code as doctor writes it: "<layer>.<what>", lower-case letters, digits, '_', '-', '.'.
inline bool ValidCode(std::string_view c) {
  if (c.empty() || c.size() > 80) return false;
  return std::all_of(c.begin(), c.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
  });
}

inline bool KnownLayer(std::string_view name) {
  const auto& known = layers::ReportNames();  // the layers and doctor's stack row
  return std::find(known.begin(), known.end(), name) != known.end();
}

// "ubuntu 22.04"
inline std::string OsLabel(const std::string& id, const std::string& version_id) {
  return id + (version_id.empty() ? "" : " " + version_id);
}

// A layer's status: the last one given for a name wins, the host's worst status follows.
inline void AddLayer(Host& h, const std::string& name, const std::string& status) {
  h.layers[name] = status;
  if (Rank(status) > Rank(h.worst)) h.worst = status;
}

}  // namespace gp::fleet
