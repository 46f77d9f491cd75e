// apt's history.log (who moved a package: doctor's kernel-without-module and driver-mismatch findings): any
// bytes through the entry parser. It must not crash; each entry names its Start-Date line inside the input
// (its date may be empty: "Start-Date:" alone), holds at most kMaxChangesPerEntry changes, each a valid
// package name and version with one of apt's actions, and what doctor prints of it (date, commandline,
// requested-by) is terminal-safe and bounded.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "probe/apt_history.h"
#include "util/input.h"

namespace {

void Safe(std::string_view s) {
  if (gp::ControlCharAt(s) || gp::InvalidUtf8At(s) || gp::BidiControlAt(s) || s.size() > 4 * 200)
    std::abort();  // 200 bytes kept, each escaped in at most 4
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  const std::string file = "/var/log/apt/history.log";
  const auto entries = gp::probe::ParseAptHistory(text, file);
  if (entries.size() > lines) std::abort();
  for (const auto& e : entries) {
    Safe(e.run.date);
    Safe(e.run.commandline);
    Safe(e.run.requested_by);
    if (e.run.where.rfind(file + ":", 0) != 0) std::abort();
    const size_t line = std::strtoull(e.run.where.c_str() + file.size() + 1, nullptr, 10);
    if (line == 0 || line > lines) std::abort();
    if (e.changes.size() > gp::probe::kMaxChangesPerEntry) std::abort();
    for (const auto& c : e.changes) {
      if (c.action != "Install" && c.action != "Upgrade" && c.action != "Downgrade" &&
          c.action != "Reinstall" && c.action != "Remove" && c.action != "Purge")
        std::abort();
      if (!gp::ValidDebName(c.package) || !gp::ValidDebVersion(c.version)) std::abort();
      (void)gp::probe::UpstreamVersion(c.version);
    }
  }
  return 0;
}
