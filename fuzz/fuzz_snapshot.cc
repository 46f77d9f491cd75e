// `launch --host FILE`: any bytes -> HostFacts or a gp::Error pointing at PATH:LINE:COL. Never a crash
// (deep nesting included), a hang or another exception type.
#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/host_json.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gp::probe::HostFacts h = gp::probe::HostFromSnapshotText(text, "fuzz.json");
    (void)gp::probe::HostToJson(h).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const gp::Error&) {
  }
  return 0;
}
