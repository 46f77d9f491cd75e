// Host identity for fleets: hostname, machine-id, and (from the driver step's NVML call) each GPU's UUID
// and serial (and its NVLink fabric state), so a fleet report can tell hosts and boards apart. With --root,
// only files under the root.
#include <cctype>

#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

// RFC 1123 host names: letters, digits, '-' and '.', at most 253 bytes. Anything else is not reported
// (the value ends up in reports and HTML pages).
bool ValidHostname(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  return true;
}

bool ValidMachineId(std::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c)))
      return false;
  return true;
}

// NVML_GPU_FABRIC_STATE_* (nvml.h) as HostFacts writes them.
std::string FabricStateName(unsigned state) {
  switch (state) {
    case 0:
      return "not-supported";
    case 1:
      return "not-started";
    case 2:
      return "in-progress";
    case 3:
      return "completed";
    default:
      return "unknown-" + std::to_string(state);
  }
}

}  // namespace

void ProbeIdentity(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  std::optional<std::string> name;
  if (Live(env)) name = fs.ReadPrefix("/proc/sys/kernel/hostname", 512);
  if (!name || Trim(*name).empty()) name = fs.ReadPrefix("/etc/hostname", 512);
  if (name) {
    std::string n(Trim(*name));
    if (ValidHostname(n))
      facts.hostname = n;
    else if (!n.empty())
      facts.probe_notes.push_back("identity: hostname is not an RFC 1123 name; not reported");
  }
  if (auto id = fs.ReadPrefix("/etc/machine-id", 128)) {
    std::string v(Trim(*id));
    if (ValidMachineId(v))
      facts.machine_id = v;
    else if (!v.empty())
      facts.probe_notes.push_back("identity: /etc/machine-id is not 32 hex digits; not reported");
  }
}

void AttachGpuIdentity(const std::vector<sys::NvmlDevice>& devices, std::vector<Gpu>& gpus) {
  for (const auto& d : devices)
    for (auto& g : gpus)
      if (ToLower(g.pci) == d.pci) {
        g.uuid = d.uuid;
        g.serial = d.serial;
        if (d.memory_total) g.memory_bytes = *d.memory_total;
        if (d.fabric_state) {
          g.fabric_state = FabricStateName(*d.fabric_state);
          if (*d.fabric_state == 3) g.fabric_status = d.fabric_status;
        }
      }
}

void AttachGpuHealth(const std::vector<sys::NvmlBusAnswer>& buses, std::vector<Gpu>& gpus) {
  for (const auto& b : buses)
    for (auto& g : gpus)
      if (ToLower(g.pci) == b.pci) {
        g.nvml_status = b.status;
        g.health = b.health;
      }
}

}  // namespace gp::probe
