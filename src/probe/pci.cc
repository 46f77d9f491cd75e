// NVIDIA PCI functions from sysfs (no driver needed): GPUs by class, NVSwitches by catalogue id or class.
#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr const char* kPciDir = "/sys/bus/pci/devices";

std::string ReadId(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 64);
  return t ? ToLower(Trim(*t)) : std::string();
}

std::string Basename(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsGpuClass(const std::string& klass) {  // VGA compatible (0x0300) or 3D controller (0x0302)
  return StartsWith(klass, "0x0300") || StartsWith(klass, "0x0302");
}

}  // namespace

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
    if (auto link = fs.ReadLink(dir + "/driver")) dev.driver = Basename(*link);
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
