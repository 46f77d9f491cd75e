// fabricmanager layer: NVIDIA Fabric Manager installed at exactly the driver's version (the upstream part of
// its package version) and enabled; without it CUDA finds no usable GPU. Shown on NVSwitch hosts, on HGX
// Blackwell (B200/B100/B300: the NVSwitches sit behind ConnectX-7 bridge functions, probe/vpd.h, and Fabric
// Manager also needs NVLSM and the InfiniBand umad interface) and on Grace Blackwell compute trays, where it
// is not applicable.
#include "layers/check.h"

#include <algorithm>

#include "layers/fabricmanager/fabricmanager.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "util/input.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

// Fabric Manager's package version against the driver's; adds the match or mismatch finding.
void CheckVersion(LayerReport& r, const std::string& upstream, const std::optional<Version>& dv,
                  const std::string& fix) {
  if (!dv) {
    r.Add("fabricmanager.no-driver", Status::kSkip, "no NVIDIA driver to match the fabric manager against");
    return;
  }
  auto fv = ParseFound(upstream);
  if (!fv || *fv != *dv)
    r.Add("fabricmanager.version-mismatch", Status::kFail,
          "fabric manager " + (upstream.empty() ? std::string("(unknown version)") : upstream) +
              " != driver " + dv->str() + " (they must be the same version)",
          fix);
  else
    r.Add("fabricmanager.match", Status::kOk, "fabric manager " + upstream + " matches the driver");
}

// Enabled and running: running is known on the live host only (probe/services.cc reads /proc).
// NVIDIA Fabric Manager User Guide, "Managing the Fabric Manager Service"
// (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html): starting the service
// (`systemctl start nvidia-fabricmanager`) and enabling it to start at boot (`systemctl enable
// nvidia-fabricmanager`) are separate steps.
void CheckService(const CheckInput& in, LayerReport& r, bool require_active) {
  const probe::FabricManagerInfo& fm = in.host.fabricmanager;
  if (!fm.enabled && !fm.running)
    r.Add("fabricmanager.not-running", Status::kFail,
          "fabric manager is installed but neither enabled nor running",
          "sudo systemctl enable --now nvidia-fabricmanager");
  if (!fm.enabled && fm.running)
    r.Add("fabricmanager.not-enabled", Status::kWarn,
          "fabric manager is running but nvidia-fabricmanager.service is not enabled: it will not start "
          "after the next reboot, and CUDA finds no usable GPU until it runs",
          "sudo systemctl enable nvidia-fabricmanager");
  if (require_active && in.host.live && fm.enabled && !fm.running)
    r.Add("fabricmanager.not-active", Status::kFail,
          "nvidia-fabricmanager.service is enabled but no nv-fabricmanager process runs",
          "sudo systemctl restart nvidia-fabricmanager; journalctl -u nvidia-fabricmanager -b");
}

// NVLSM (NVIDIA's NVLink Subnet Manager) installed, at the stack's pin when there is one, started with
// Fabric Manager. Fabric Manager's own start script starts NVLSM on these systems, so an enabled
// nvidia-fabricmanager unit counts as NVLSM enabled as much as an enabled unit of its own does.
void CheckNvlsm(const CheckInput& in, LayerReport& r) {
  const probe::NvlsmInfo& sm = in.host.fabric.nvlsm;
  const std::string pin = NvlsmPin(in.stack);
  const manifest::AptPackage* entry = NvlsmEntry(in.stack);
  std::string word = "nvlsm";
  if (entry && !entry->version.empty() && ValidDebVersion(entry->version))
    word = "nvlsm=" + entry->version;
  else if (!pin.empty())
    word = "'nvlsm=" + pin + "-*'";  // the upstream pin, any revision (quoted: a shell glob)
  if (!sm.installed) {
    r.Add(
        "fabricmanager.nvlsm-missing", Status::kFail,
        "no NVLSM (NVLink Subnet Manager): Fabric Manager cannot bring up the NVLink fabric without it, and "
        "CUDA reports the system not ready",
        "sudo apt-get install " + word + " (NVIDIA's CUDA repository)");
    return;
  }
  if (!pin.empty()) {
    auto want = ParseFound(pin);
    auto have = ParseFound(sm.version);
    if (!want || !have || *want != *have)
      r.Add("fabricmanager.nvlsm-version-mismatch", Status::kFail,
            "NVLSM " + (sm.version.empty() ? std::string("(unknown version)") : sm.version) +
                " != the stack's " + pin,
            "sudo apt-get install " + word);
    else
      r.Add("fabricmanager.nvlsm-match", Status::kOk, "NVLSM " + sm.version + " as the stack pins");
  } else {
    r.Add("fabricmanager.nvlsm-present", Status::kOk,
          "NVLSM " + (sm.version.empty() ? std::string("(unknown version)") : sm.version) + " installed");
  }
  if (!sm.enabled && !in.host.fabricmanager.enabled)
    r.Add("fabricmanager.nvlsm-not-enabled", Status::kFail,
          "NVLSM is installed but neither its unit nor nvidia-fabricmanager.service is enabled",
          "sudo systemctl enable --now nvidia-fabricmanager");
  if (in.host.live && !sm.running)
    r.Add("fabricmanager.nvlsm-not-active", Status::kFail, "no nvlsm process runs",
          "sudo systemctl restart nvidia-fabricmanager; journalctl -u nvidia-fabricmanager -b");
}

// ib_umad: NVLSM reaches the switches through the InfiniBand umad interface (/dev/infiniband/umad*). On
// Ubuntu the module ships in linux-modules-extra-<kernel>, a kernel package gpuprep never pins.
void CheckUmad(const CheckInput& in, LayerReport& r) {
  const probe::FabricInfo& f = in.host.fabric;
  if (f.ib_umad_loaded || f.ib_umad_available) {
    r.Add("fabricmanager.ib-umad", Status::kOk, "ib_umad " + f.ib_umad_detail);
    return;
  }
  const std::string extra = "linux-modules-extra-" + in.host.kernel;
  r.Add("fabricmanager.ib-umad-missing", Status::kFail,
        "the running kernel has no ib_umad module (InfiniBand umad): NVLSM cannot reach the NVLink switches",
        "sudo apt-get install " + (ValidDebName(extra) ? extra : "linux-modules-extra-$(uname -r)") +
            " && sudo modprobe ib_umad");
}

// NVML's GPU fabric state, the ground truth on the live host: every GPU "completed" with status success.
void CheckFabricState(const CheckInput& in, LayerReport& r) {
  int completed = 0, asked = 0, unsupported = 0;
  for (const probe::Gpu& g : in.host.gpus) {
    if (g.fabric_state.empty()) continue;
    ++asked;
    if (g.fabric_state == "not-supported") {
      ++unsupported;
      continue;
    }
    if (g.fabric_state != "completed") {
      r.Add("fabricmanager.fabric-not-completed", Status::kFail,
            "GPU " + g.pci + ": NVLink fabric state " + g.fabric_state +
                " (CUDA returns CUDA_ERROR_SYSTEM_NOT_READY until it completes)",
            "fix the findings above, then: sudo systemctl restart nvidia-fabricmanager");
    } else if (g.fabric_status && *g.fabric_status != 0) {
      r.Add("fabricmanager.fabric-error", Status::kFail,
            "GPU " + g.pci + ": NVLink fabric registration completed with NVML error " +
                std::to_string(*g.fabric_status),
            "journalctl -u nvidia-fabricmanager -b; then: sudo systemctl restart nvidia-fabricmanager");
    } else {
      ++completed;
    }
  }
  if (asked == 0)
    r.Add("fabricmanager.fabric-state-unknown", Status::kSkip,
          "NVLink fabric state not read (NVML answers on the live host with a working driver)");
  else if (completed > 0 && completed == asked)
    r.Add("fabricmanager.fabric-completed", Status::kOk,
          "NVLink fabric state completed on " + std::to_string(completed) + " GPU(s)");
  else if (unsupported == asked)
    r.Add("fabricmanager.fabric-not-supported", Status::kWarn,
          "NVML reports the NVLink fabric state as not supported on every GPU of an HGX Blackwell board",
          "nvidia-smi -q | grep -A 3 Fabric");
}

// HGX Blackwell: Fabric Manager at the driver's version, NVLSM, ib_umad, the fabric state.
void CheckHgxBlackwell(const CheckInput& in, LayerReport& r, const std::optional<Version>& dv) {
  const probe::FabricInfo& f = in.host.fabric;
  const probe::FabricManagerInfo& fm = in.host.fabricmanager;
  if (f.decided_by == "vpd")
    r.Add("fabricmanager.hgx-blackwell", Status::kOk,
          "HGX Blackwell: " + std::to_string(f.bridges) +
              " NVLink switch bridge(s) (ConnectX-7, VPD SMDL=SW_MNG)");
  else  // a skip: something not checked, shown in the table, without making the layer worse than ok
    r.Add("fabricmanager.vpd-not-read", Status::kSkip,
          "HGX Blackwell, from the board: the ConnectX-7 VPD was not read (readable by root only), NVLink "
          "switch bridges assumed");
  std::string fm_pkg = "nvidia-fabricmanager";
  for (const auto& p : in.stack.driver.fabricmanager_packages)
    if (!manifest::FabricPackage(p) && ValidDebName(p.name)) fm_pkg = p.name;
  const std::string fm_fix = "sudo apt-get install " + fm_pkg + " (at the driver's version" +
                             (dv ? ", " + dv->str() : std::string()) + ", from NVIDIA's CUDA repository)";
  if (!fm.installed) {
    r.Add("fabricmanager.missing", Status::kFail,
          "HGX Blackwell but no fabric manager: the GPUs stay in fabric state \"in progress\" and CUDA "
          "finds no usable GPU",
          fm_fix);
  } else {
    CheckVersion(r, DebVersion::Parse(fm.version).upstream, dv, fm_fix);
    CheckService(in, r, true);
  }
  if (dv)
    if (std::string why = PlatformDriverProblem(in.host, *dv); !why.empty())
      r.Add("fabricmanager.platform-driver", Status::kFail, why,
            "install a newer driver: gpuprep apply with a stack whose driver is 570.133.20 or later");
  CheckNvlsm(in, r);
  CheckUmad(in, r);
  CheckFabricState(in, r);
}

bool Shown(const probe::HostFacts& h) { return h.nvswitch_count > 0 || !h.fabric.platform.empty(); }

}  // namespace

bool HgxBlackwell(const probe::HostFacts& host) { return host.fabric.platform == "hgx-blackwell"; }

bool NeedsFabricManager(const probe::HostFacts& host) {
  return host.nvswitch_count > 0 || HgxBlackwell(host);
}

const manifest::AptPackage* NvlsmEntry(const manifest::Stack& stack) {
  for (const manifest::AptPackage& p : stack.driver.fabricmanager_packages)
    if (p.name == "nvlsm") return &p;
  return nullptr;
}

// NVIDIA GPU Operator, Platform Support
// (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html, from
// gpu-operator/platform-support.rst in github.com/NVIDIA/cloud-native-docs): "HGX B200 requires a driver
// container version of 570.133.20 or later."
std::string PlatformDriverProblem(const probe::HostFacts& host, const Version& driver) {
  if (!HgxBlackwell(host)) return "";
  const bool b200 = std::any_of(host.gpus.begin(), host.gpus.end(),
                                [](const probe::Gpu& g) { return g.device_id == "0x2901"; });
  static const Version kHgxB200Min = *Version::Parse("570.133.20");
  if (!b200 || !(driver < kHgxB200Min)) return "";
  return "HGX B200 needs driver 570.133.20 or later (NVIDIA GPU Operator platform support), not " +
         driver.str();
}

std::vector<manifest::AptPackage> FabricPackagesFor(const manifest::Stack& stack,
                                                    const probe::HostFacts& host) {
  std::vector<manifest::AptPackage> out;
  if (!HgxBlackwell(host)) return out;
  for (const manifest::AptPackage& p : stack.driver.fabricmanager_packages)
    if (manifest::FabricPackage(p)) out.push_back(p);
  return out;
}

std::vector<manifest::AptPackage> LayerPackagesFor(const manifest::Stack& stack,
                                                   const probe::HostFacts& host) {
  std::vector<manifest::AptPackage> out;
  for (const manifest::AptPackage& p : stack.driver.fabricmanager_packages)
    if (!manifest::FabricPackage(p)) out.push_back(p);
  for (manifest::AptPackage& p : FabricPackagesFor(stack, host)) out.push_back(std::move(p));
  return out;
}

std::string NvlsmSuccessor(const manifest::Stack& stack) {
  for (const std::string& name : manifest::EmbeddedStackNames()) {
    if (name == stack.name) continue;
    const manifest::Stack s = manifest::LoadStack(name, manifest::LoadContext{});
    if (manifest::Succeeds(s, stack) && !NvlsmPin(s).empty()) return name;
  }
  return "";
}

std::string NvlsmPin(const manifest::Stack& stack) {
  const manifest::AptPackage* p = NvlsmEntry(stack);
  if (!p) return "";
  return p->version.empty() ? p->upstream : DebVersion::Parse(p->version).upstream;
}

LayerReport CheckFabricManager(const CheckInput& in) {
  LayerReport r;
  r.name = "fabricmanager";
  const probe::FabricManagerInfo& fm = in.host.fabricmanager;
  std::optional<Version> dv = HostDriverVersion(in.host);
  if (dv)
    r.wanted = "= " + dv->str() + " (the driver's version)";
  else if (in.stack.driver.version.known())
    r.wanted = "= " + in.stack.driver.version.version->str();
  std::string upstream = DebVersion::Parse(fm.version).upstream;
  if (fm.installed && !upstream.empty()) r.found = upstream;

  const std::string& platform = in.host.fabric.platform;
  if (platform == "hgx-blackwell") {
    if (const std::string pin = NvlsmPin(in.stack); !pin.empty()) r.wanted += "; nvlsm " + pin;
    CheckHgxBlackwell(in, r, dv);
    return r;
  }
  const int n = in.host.nvswitch_count;
  if (n == 0 && platform == "grace-blackwell") {
    r.Add(
        "fabricmanager.not-applicable", Status::kSkip,
        "Grace Blackwell compute tray (GB200/GB300 NVL72): the NVLink switches sit in separate switch trays "
        "with their own fabric management, so this host runs no fabric manager; IMEX (multi-node NVLink "
        "memory sharing) is out of gpuprep's scope");
    return r;
  }
  if (n == 0) {
    r.Add("fabricmanager.not-needed", Status::kSkip,
          "no NVSwitch on this host: fabric manager is not needed");
    return r;
  }
  std::string switches = std::to_string(n) + " NVSwitch" + (n == 1 ? "" : "es");
  if (!fm.installed) {
    r.Add("fabricmanager.missing", Status::kFail,
          switches + " but no fabric manager: CUDA finds no usable GPU until it runs",
          ApplyFix("fabricmanager"));
    return r;
  }
  CheckVersion(r, upstream, dv, ApplyFix("fabricmanager"));
  CheckService(in, r, false);
  return r;
}

extern const Layer kFabricManagerLayer = {
    "fabricmanager",
    CheckFabricManager,
    Shown,
    PlanFabricManager,
    VerifyFabricManager,
    [](const manifest::Stack&, const probe::HostFacts& h) { return NeedsFabricManager(h); },
    FabricManagerReads};

}  // namespace gp::layers
