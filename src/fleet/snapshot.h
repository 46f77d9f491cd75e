// Reading one `gpuprep doctor --json` snapshot into a fleet Host. fleet-report reads what it shows (the host's
// hostname, machine-id, os and GPUs, the stack, each layer's status and findings) and checks each of those where
// it enters; the rest of the document must be valid JSON within the snapshot reader's limits (16 MiB, nesting 32
// levels, every number within a double) but is not interpreted.
//
// Two readers, one contract:
//  - ReadSnapshotChecked (nlohmann's DOM) is the reference: it accepts or refuses, and its errors point
//    ("node.json:14:9: layers[2].status: expected ok, warn, fail or skip").
//  - SnapshotReader::ReadFast (simdjson's On-Demand, one pass, no document tree) answers only when it is sure:
//    for a document it is not (any error, a key it reads given twice, a byte-order mark) it answers nullopt and
//    the caller runs the reference. Where it answers, the Host is the reference's (tests/fleet, fuzz_snapshot).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "fleet/model.h"

namespace gp::fleet {

// Throws FileError "PATH:LINE:COL: message" (exit 2) when `text` is not a doctor document.
Host ReadSnapshotChecked(const std::string& text, const std::string& display_path);

class SnapshotReader {
 public:
  SnapshotReader();
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  // Whether this build has the fast reader (simdjson; not in the portable .deb build, see CMakeLists.txt).
  static bool Fast();
  // The fast reader alone: the Host, or nullopt when the reference must decide (always, without it).
  std::optional<Host> ReadFast(const std::string& text);
  // ReadFast, else ReadSnapshotChecked: the Host, or the reference's error.
  Host Read(const std::string& text, const std::string& display_path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;  // the parser and its padded buffer, reused from one snapshot to the next
};

}  // namespace gp::fleet
