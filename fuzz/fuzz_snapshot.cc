// Snapshots, any bytes:
//  - `launch --host FILE`: HostFacts or a gp::Error pointing at PATH:LINE:COL. Never a crash (deep nesting
//    included), a hang or another exception type.
//  - fleet-report's two readers (src/fleet/snapshot.h): where the fast one (simdjson On-Demand) answers, the
//    reference (nlohmann DOM) accepts the document and gives the same Host.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fleet/snapshot.h"
#include "probe/host_json.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gp::probe::HostFacts h = gp::probe::HostFromSnapshotText(text, "fuzz.json");
    (void)gp::probe::HostToJson(h).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const gp::Error&) {
  }
  static gp::fleet::SnapshotReader reader;
  const auto fast = reader.ReadFast(text);
  try {
    gp::fleet::Host ref = gp::fleet::ReadSnapshotChecked(text, "fuzz.json");
    if (fast) {
      gp::fleet::Host f = *fast;
      f.file = ref.file;
      if (!(f == ref)) std::abort();
    }
  } catch (const gp::Error&) {
    if (fast) std::abort();  // answered a document the reference refuses
  }
  return 0;
}
