// NVIDIA PCI functions from sysfs (no driver needed): GPUs by class, NVSwitches by catalogue id or class.
#include <cctype>

#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr const char* kPciDir = "/sys/bus/pci/devices";

std::string ReadId(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 64);
  return t ? ToLower(Trim(*t)) : std::string();
}

std::string LinkName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "/sys/bus/pci/devices/../../../devices/pci0000:00/0000:00:01.0/X" -> "/sys/devices/pci0000:00/...":
// a link target made absolute, its "." and ".." taken out (never above "/").
std::string LexicalPath(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& p : Split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  return "/" + Join(parts, "/");
}

std::optional<int> ReadWidth(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 32);
  if (!t) return std::nullopt;
  auto n = ParseUnsigned(Trim(*t));
  if (!n || *n == 0 || *n > 32)
    return std::nullopt;  // x1..x32 (PCIe's widest link); the kernel writes 0 when down
  return static_cast<int>(*n);
}

std::optional<double> ReadSpeed(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 64);
  return t ? ParseLinkSpeed(*t) : std::nullopt;
}

// The link files of a GPU function, and the maximum speed of the port above it: /sys/bus/pci/devices/X is a
// link into /sys/devices, where the function's parent directory is that port (absent: a tree of plain
// directories, or a function directly on a root bus).
void ReadPcieLink(const sys::Fs& fs, const std::string& dir, Gpu& gpu) {
  gpu.pcie.width = ReadWidth(fs, dir + "/current_link_width");
  gpu.pcie.max_width = ReadWidth(fs, dir + "/max_link_width");
  gpu.pcie.speed = ReadSpeed(fs, dir + "/current_link_speed");
  gpu.pcie.max_speed = ReadSpeed(fs, dir + "/max_link_speed");
  if (auto target = fs.ReadLink(dir)) {
    const std::string real = LexicalPath(ResolveLink(dir, *target));
    const std::string port = real.substr(0, real.rfind('/'));
    if (StartsWith(port, "/sys/devices/pci"))
      gpu.pcie.port_max_speed = ReadSpeed(fs, port + "/max_link_speed");
  }
  // The config space's first bytes are the vendor and device ids; a function that no longer answers reads
  // all ones (the kernel's own test for a device that is gone: pci_device_is_present).
  if (auto config = fs.ReadPrefix(dir + "/config", 4); config && config->size() == 4)
    gpu.config_all_ones = *config == std::string(4, '\xff');
}

bool IsGpuClass(const std::string& klass) {  // VGA compatible (0x0300) or 3D controller (0x0302)
  return StartsWith(klass, "0x0300") || StartsWith(klass, "0x0302");
}

}  // namespace

std::optional<double> ParseLinkSpeed(std::string_view text) {
  std::string_view t = Trim(text);
  if (EndsWith(t, " PCIe")) t.remove_suffix(5);
  if (!EndsWith(t, " GT/s")) return std::nullopt;
  t.remove_suffix(5);
  // digits, at most one '.', digits: "2.5", "8", "16.0"
  if (t.empty() || t.size() > 8 || !std::isdigit(static_cast<unsigned char>(t.front())) ||
      !std::isdigit(static_cast<unsigned char>(t.back())))
    return std::nullopt;
  // Read by hand, not with strtod, which follows the locale's decimal point.
  double digits = 0, divisor = 1;
  bool dot = false;
  for (char c : t) {
    if (c == '.') {
      if (dot) return std::nullopt;
      dot = true;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = digits * 10 + (c - '0');
      if (dot) divisor *= 10;
    } else {
      return std::nullopt;
    }
  }
  return digits / divisor;
}

void ProbePci(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  auto addresses = fs.List(kPciDir);  // sorted: GPU index = order by PCI address
  if (addresses.empty()) {
    facts.probe_notes.push_back(std::string("gpu: ") + kPciDir + " is empty or missing");
    return;
  }
  for (const auto& addr : addresses) {
    const std::string dir = std::string(kPciDir) + "/" + addr;
    if (ReadId(fs, dir + "/vendor") != "0x10de") continue;
    PciDevice dev;
    dev.address = addr;
    dev.vendor_id = "0x10de";
    dev.device_id = ReadId(fs, dir + "/device");
    dev.subsystem_vendor_id = ReadId(fs, dir + "/subsystem_vendor");
    dev.subsystem_device_id = ReadId(fs, dir + "/subsystem_device");
    dev.class_id = ReadId(fs, dir + "/class");
    if (auto link = fs.ReadLink(dir + "/driver")) dev.driver = LinkName(*link);
    if (auto numa = fs.ReadPrefix(dir + "/numa_node", 32)) {
      if (auto n = ParseUnsigned(Trim(*numa))) dev.numa_node = static_cast<int>(*n);  // "-1": none
    }
    facts.nvidia_pci.push_back(dev);

    bool nvswitch =
        (env.compat && env.compat->IsNvSwitch(dev.device_id)) || StartsWith(dev.class_id, "0x0680");
    if (nvswitch) {
      ++facts.nvswitch_count;
      continue;
    }
    if (!IsGpuClass(dev.class_id)) continue;  // audio, USB-C controllers of consumer cards
    Gpu gpu;
    gpu.index = static_cast<int>(facts.gpus.size());
    gpu.pci = addr;
    gpu.device_id = dev.device_id;
    gpu.subsystem_vendor_id = dev.subsystem_vendor_id;
    gpu.subsystem_device_id = dev.subsystem_device_id;
    gpu.driver = dev.driver;
    ReadPcieLink(fs, dir, gpu);
    const manifest::GpuModel* model =
        env.compat ? env.compat->GpuByPci(dev.device_id, dev.subsystem_vendor_id, dev.subsystem_device_id)
                   : nullptr;
    if (model) {
      gpu.name = model->name;
      gpu.architecture = model->arch;
      gpu.compute_capability = model->cc.str();
      gpu.known = true;
    } else {
      gpu.name = "unknown NVIDIA GPU " + dev.device_id;
    }
    facts.gpus.push_back(gpu);
  }
}

}  // namespace gp::probe
