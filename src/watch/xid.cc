#include "watch/xid.h"

#include <optional>

#include "util/kernel_xid.h"

namespace gp::watch {
namespace {

// The numbers of "DOMAIN:BUS:DEVICE[.FUNCTION]", hex; nullopt when malformed.
struct PciNumbers {
  unsigned long domain = 0, bus = 0, device = 0;
};
std::optional<PciNumbers> PciOf(std::string_view s) {
  if (const size_t dot = s.find('.'); dot != std::string_view::npos) s = s.substr(0, dot);
  unsigned long v[3] = {0, 0, 0};
  size_t field = 0, digits = 0;
  for (char c : s) {
    if (c == ':') {
      if (digits == 0 || ++field > 2) return std::nullopt;
      digits = 0;
      continue;
    }
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0 || ++digits > 8) return std::nullopt;
    v[field] = v[field] * 16 + static_cast<unsigned long>(d);
  }
  if (field != 2 || digits == 0) return std::nullopt;
  return PciNumbers{v[0], v[1], v[2]};
}

}  // namespace

bool SamePciDevice(std::string_view nvml_bus_id, std::string_view xid_pci) {
  const auto a = PciOf(nvml_bus_id), b = PciOf(xid_pci);
  return a && b && a->domain == b->domain && a->bus == b->bus && a->device == b->device;
}

XidAttach AttachXids(std::string_view records, std::vector<GpuSample>& gpus) {
  XidAttach out;
  ForEachLogLine(records, [&](std::string_view line) {
    if (line.empty() || line.front() == ' ') return;  // a continuation line (" SUBSYSTEM=pci")
    const auto rec = ParseKmsgRecord(line);
    if (!rec) return;
    auto x = ParseXidLine(rec->message);
    if (!x) return;
    GpuSample* gpu = nullptr;
    for (GpuSample& g : gpus)
      if (SamePciDevice(g.id.pci_bus_id, x->pci)) gpu = &g;
    if (!gpu) {
      ++out.unmatched;
      return;
    }
    if (gpu->xids.size() >= kMaxXidsPerGpuTick) {
      ++out.dropped;
      return;
    }
    gpu->xids.push_back({x->code, std::move(x->pid), std::move(x->process), std::move(x->detail)});
    ++out.matched;
  });
  return out;
}

}  // namespace gp::watch
