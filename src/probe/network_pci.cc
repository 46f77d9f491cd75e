// Where the GPUs and RDMA devices sit on PCIe, for the network layer's ACS and NIC-to-GPU affinity checks:
// each function's bridges from its sysfs path (/sys/bus/pci/devices/ADDR links to
// ../../../devices/pci0000:00/ROOT_PORT/.../ADDR), the ACS Control register of each bridge (the extended
// capability 0x000D in /sys/bus/pci/devices/BRIDGE/config: the kernel gives the extended config space past
// 256 bytes to root only), each RDMA device's NUMA node, and whether the host is a virtual machine (DMI
// sys_vendor/product_name, or the CPU's hypervisor flag), where ACS is expected.
#include <algorithm>
#include <cctype>
#include <set>

#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr size_t kMaxBridges = 256;
constexpr size_t kConfigBase = 256;  // the extended config space starts here
constexpr uint16_t kAcsCapId = 0x000D;

uint32_t Le32(const std::string& b, size_t off) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[off])) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[off + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[off + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[off + 3])) << 24;
}

// The bridges above `addr`, root port first, from its sysfs link; nullopt when the link is not there.
std::optional<std::vector<std::string>> BridgesAbove(const sys::Fs& fs, const std::string& addr) {
  auto link = fs.ReadLink("/sys/bus/pci/devices/" + addr);
  if (!link) return std::nullopt;
  std::vector<std::string> chain;
  for (const auto& part : Split(*link, '/'))
    if (IsPciAddress(part)) chain.push_back(part);
  if (chain.empty() || chain.back() != addr || chain.size() > 16) return std::nullopt;
  chain.pop_back();
  return chain;
}

// A DMI vendor or product that only a hypervisor reports (QEMU/KVM, VMware, Hyper-V, Xen, VirtualBox,
// Google Compute Engine, OpenStack, Parallels, Bochs).
bool VmDmi(const std::string& vendor, const std::string& product) {
  static const char* kVendors[] = {"QEMU", "VMware, Inc.", "Xen", "innotek GmbH", "Parallels", "Bochs"};
  static const char* kProducts[] = {"KVM",
                                    "Virtual Machine",
                                    "VirtualBox",
                                    "HVM domU",
                                    "Google Compute Engine",
                                    "OpenStack Nova",
                                    "Standard PC (Q35 + ICH9, 2009)",
                                    "Standard PC (i440FX + PIIX, 1996)"};
  for (const char* v : kVendors)
    if (vendor == v) return true;
  for (const char* p : kProducts)
    if (product == p || StartsWith(product, std::string(p) + " ")) return true;
  return false;
}

std::string PciValue(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 128);
  if (!t) return "";
  std::string v(Trim(*t));
  for (char& c : v)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return v;
}

void ReadAcs(const ProbeEnv& env, NetworkInfo& n) {
  for (auto& b : n.bridges) {
    auto cfg = env.fs->ReadPrefix("/sys/bus/pci/devices/" + b.address + "/config", 4096);
    if (!cfg) {
      n.acs_skip = "the config space of bridge " + b.address + " cannot be read";
      return;
    }
    if (cfg->size() <= kConfigBase) {
      n.acs_skip = Live(env) ? "reading the PCIe extended config space needs root"
                             : "the config file of bridge " + b.address + " holds " +
                                   std::to_string(cfg->size()) + " bytes: no extended config space";
      return;
    }
    b.acs_ctrl = AcsControl(*cfg);
  }
}

}  // namespace

bool IsPciAddress(std::string_view s) {
  // DDDD:BB:DD.F in hex
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::optional<uint16_t> AcsControl(const std::string& config) {
  size_t off = kConfigBase;
  for (int hops = 0; hops < 64 && off + 8 <= config.size(); ++hops) {
    uint32_t header = Le32(config, off);
    if (header == 0 || header == 0xffffffffu) return std::nullopt;
    if ((header & 0xffff) == kAcsCapId) return static_cast<uint16_t>(Le32(config, off + 4) >> 16);
    size_t next = (header >> 20) & 0xffc;
    if (next < kConfigBase || next <= off) return std::nullopt;  // the list must move forward
    off = next;
  }
  return std::nullopt;
}

std::string DetectVm(const sys::Fs& fs) {
  const std::string vendor = PciValue(fs, "/sys/class/dmi/id/sys_vendor");
  const std::string product = PciValue(fs, "/sys/class/dmi/id/product_name");
  if (VmDmi(vendor, product)) return "DMI says " + vendor + (product.empty() ? "" : " " + product);
  if (auto cpuinfo = fs.ReadPrefix("/proc/cpuinfo", size_t{64} * 1024)) {
    for (const auto& line : Split(*cpuinfo, '\n')) {
      if (!StartsWith(line, "flags")) continue;
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      for (const auto& w : SplitWords(std::string_view(line).substr(colon + 1)))
        if (w == "hypervisor") return "the CPU has the hypervisor flag";
      break;
    }
  }
  return "";
}

void ProbePciPaths(const ProbeEnv& env, HostFacts& facts) {
  NetworkInfo& n = facts.network;
  const sys::Fs& fs = *env.fs;
  for (auto& d : n.rdma) {
    if (!IsPciAddress(d.pci)) continue;
    if (auto numa = ParseUnsigned(PciValue(fs, "/sys/bus/pci/devices/" + d.pci + "/numa_node"));
        numa && *numa < 4096)
      d.numa_node = static_cast<int>(*numa);
  }
  if (n.rdma.empty() || facts.gpus.empty()) return;
  std::vector<std::string> functions;
  for (const auto& g : facts.gpus) functions.push_back(g.pci);
  for (const auto& d : n.rdma) functions.push_back(d.pci);
  std::set<std::string> seen;
  for (const auto& f : functions) {
    if (!IsPciAddress(f)) continue;
    auto chain = BridgesAbove(fs, f);
    if (!chain) continue;
    for (const auto& b : *chain)
      if (seen.size() < kMaxBridges && seen.insert(b).second) n.bridges.push_back({b, std::nullopt});
    n.upstream[f] = std::move(*chain);
  }
  std::sort(n.bridges.begin(), n.bridges.end(),
            [](const PciBridge& a, const PciBridge& b) { return a.address < b.address; });
  n.vm = DetectVm(fs);
  if (!n.bridges.empty()) ReadAcs(env, n);
}

}  // namespace gp::probe
