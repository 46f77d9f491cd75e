// Snapshots, any bytes:
//  - `launch --host FILE`: HostFacts or a gp::Error pointing at PATH:LINE:COL. Never a crash (deep nesting
//    included), a hang or another exception type.
//  - fleet-report's two readers (src/fleet/snapshot.h) agree: where the fast one answers, the reference
//  (nlohmann
//    DOM) accepts the document and gives the same Host; where the fast one refuses, the reference refuses
//    too. So fleet::ParseSnapshot, the fast reader with the reference behind it, gives the reference's Host
//    or its error on every input.
//  - the host's Markdown fleet report has no markup from the snapshot's text (fuzz/markdown_props.h);
//  - the scanner under the fast reader (util/json_scan.h), as a validator, against the parse the reference
//    starts with (probe::ParseSnapshotJson: size, depth, nlohmann): it accepts exactly what that accepts, but
//    for the numbers it leaves to nlohmann (a verdict of unsure).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "fleet/render.h"
#include "fleet/snapshot.h"
#include "markdown_props.h"
#include "probe/host_json.h"
#include "util/error.h"
#include "util/json_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gp::probe::HostFacts h = gp::probe::HostFromSnapshotText(text, "fuzz.json");
    (void)gp::probe::HostToJson(h).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const gp::Error&) {
  }

  gp::fleet::FastOutcome outcome = gp::fleet::FastOutcome::kDeferred;
  const auto fast = gp::fleet::ReadSnapshotFast(text, &outcome);
  if (fast.has_value() != (outcome == gp::fleet::FastOutcome::kAnswered)) std::abort();
  std::optional<gp::fleet::Host> ref;
  try {
    ref = gp::fleet::ReadSnapshotChecked(text, "fuzz.json");
  } catch (const gp::Error&) {
  }
  if (fast) {
    if (!ref) std::abort();  // answered a document the reference refuses
    gp::fleet::Host f = *fast;
    f.file = ref->file;
    if (!(f == *ref)) std::abort();
  }
  if (outcome == gp::fleet::FastOutcome::kRefused && ref) std::abort();
  if (ref) {  // the host's Markdown report: no markup from what the snapshot says
    const gp::fleet::Report report = gp::fleet::BuildReport({*ref});
    gp::fuzz::CheckMarkdownReport(report, gp::fleet::RenderMarkdown(report));
  }

  if (text.size() <= gp::probe::kMaxSnapshotBytes) {
    const auto verdict = gp::ValidateJson(text, gp::probe::kMaxSnapshotDepth);
    bool parses = true;
    try {
      (void)gp::probe::ParseSnapshotJson(text, "fuzz.json");
    } catch (const gp::Error&) {
      parses = false;
    }
    if (verdict == gp::JsonScanner::Verdict::kOk && !parses) std::abort();
    if (verdict == gp::JsonScanner::Verdict::kInvalid && parses) std::abort();
  }
  return 0;
}
