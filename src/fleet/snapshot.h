// Reading one `gpuprep doctor --json` snapshot into a fleet Host. fleet-report reads what it shows (the
// host's hostname, machine-id, os and GPUs, the stack, each layer's status and findings) and checks each of
// those where it enters; the rest of the document must be valid JSON within the snapshot reader's limits (16
// MiB, nesting 32 levels, every number within a double) but is not interpreted.
//
// Two readers, one contract:
//  - ReadSnapshotChecked (nlohmann's DOM) is the reference: it accepts or refuses, and its errors point
//    ("node.json:14:9: layers[2].status: expected ok, warn, fail or skip").
//  - ReadSnapshotFast (util/json_scan.h: one pass, no document tree, the text read in place) answers only
//    when it is sure. For a document it is not sure of (any error, a key it reads given twice, a string it
//    reads over the field limit, a number near a double's limit) it answers nullopt and the caller runs the
//    reference. Where it answers, the Host is the reference's; where it says the text is refused, the
//    reference refuses it too (tests/fleet, fuzz_snapshot).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "fleet/model.h"

namespace gp::fleet {

// Throws FileError "PATH:LINE:COL: message" (exit 2) when `text` is not a doctor document.
Host ReadSnapshotChecked(const std::string& text, const std::string& display_path);

// What the fast reader made of a text.
enum class FastOutcome {
  kAnswered,  // the Host, the reference's
  kRefused,   // not JSON as the reference parses it, or over its size or nesting limit: the reference refuses
              // it
  kDeferred,  // anything else it gave up on (valid JSON that is not a doctor document, or unusual): ask the
              // reference
};

// The fast reader alone: the Host, or nullopt (with the reason in `outcome` when given). Host::file stays "".
// fleet::ParseSnapshot (model.h) runs this, then the reference when it answers nullopt.
std::optional<Host> ReadSnapshotFast(std::string_view text, FastOutcome* outcome = nullptr);

}  // namespace gp::fleet
