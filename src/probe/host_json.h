// HostFacts <-> the "host" object of `doctor --json` (docs/json.md). HostToJson writes the stable keys
// (os, kernel, arch, cpus, memory_bytes, shm_bytes, gpus[], docker{}) plus gpuprep's extras;
// HostFromJson reads a saved snapshot back for `launch --host`, tolerating unknown keys.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "probe/host.h"

namespace gp::probe {

nlohmann::json HostToJson(const HostFacts& host);

// `display_path` names the file in errors. Throws gp::FileError (exit 2) for a missing required key or
// a wrong type ("node.json:1:1: host.gpus[1].index: expected an integer"); JSON syntax errors carry
// nlohmann's byte offset converted to line:column.
HostFacts HostFromJson(const nlohmann::json& doc, const std::string& display_path);

// Limits on a snapshot text: size, and nesting (a doctor snapshot nests 4 levels).
constexpr size_t kMaxSnapshotBytes = 16u << 20;
constexpr int kMaxSnapshotDepth = 32;

// Parses the whole `doctor --json` document text (the "host" object inside it, or a bare host object).
HostFacts HostFromSnapshotText(const std::string& text, const std::string& display_path);

// The two halves of HostFromSnapshotText, for a reader that also needs the rest of the document
// (fleet-report): the text parsed within the size and depth limits, errors as `path:line:col`; then the host
// read from it.
nlohmann::json ParseSnapshotJson(const std::string& text, const std::string& display_path);
HostFacts HostFromSnapshot(const nlohmann::json& doc, const std::string& text,
                           const std::string& display_path);

}  // namespace gp::probe
