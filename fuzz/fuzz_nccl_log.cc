// `gpuprep nccl-log`: any bytes through the NCCL log reader. It must not crash, and everything it keeps of
// the input (messages, quotes, the interface and network names) must be safe to print on a terminal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nccllog/reader.h"
#include "util/input.h"

namespace {

void Safe(std::string_view s) {
  if (gp::ControlCharAt(s) || gp::InvalidUtf8At(s) || gp::BidiControlAt(s)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const gp::nccllog::Summary s =
      gp::nccllog::ReadText(std::string_view(reinterpret_cast<const char*>(data), size));
  Safe(s.version);
  Safe(s.network);
  Safe(s.bootstrap);
  for (const auto& d : s.ib_devices) Safe(d);
  for (const auto& f : s.findings) {
    Safe(f.message);
    Safe(f.quote);
    Safe(f.fix);
    if (f.count == 0 || f.first_line > f.last_line) std::abort();
  }
  return 0;
}
