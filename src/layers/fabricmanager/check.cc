// fabricmanager layer (NVSwitch hosts only): NVIDIA Fabric Manager installed at exactly the driver's
// version (the upstream part of its package version) and enabled; without it CUDA finds no usable GPU.
#include "layers/check.h"

#include "layers/fabricmanager/fabricmanager.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

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

  const int n = in.host.nvswitch_count;
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
  if (!dv) {
    r.Add("fabricmanager.no-driver", Status::kSkip, "no NVIDIA driver to match the fabric manager against");
  } else {
    auto fv = ParseFound(upstream);
    if (!fv || *fv != *dv)
      r.Add("fabricmanager.version-mismatch", Status::kFail,
            "fabric manager " + (upstream.empty() ? std::string("(unknown version)") : upstream) +
                " != driver " + dv->str() + " (they must be the same version)",
            ApplyFix("fabricmanager"));
    else
      r.Add("fabricmanager.match", Status::kOk, "fabric manager " + upstream + " matches the driver");
  }
  if (!fm.enabled && !fm.running)
    r.Add("fabricmanager.not-running", Status::kFail,
          "fabric manager is installed but neither enabled nor running",
          "sudo systemctl enable --now nvidia-fabricmanager");
  // Running but not enabled (started by hand, or with `systemctl start` alone): it does not start at the next
  // boot, and then CUDA finds no usable GPU. NVIDIA Fabric Manager User Guide, "Managing the Fabric Manager
  // Service" (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html): starting the
  // service (`systemctl start nvidia-fabricmanager`) and enabling it to start at boot (`systemctl enable
  // nvidia-fabricmanager`) are separate steps. Whether it runs is known on the live host only
  // (probe/services.cc reads /proc), so with --root this never fires.
  if (!fm.enabled && fm.running)
    r.Add("fabricmanager.not-enabled", Status::kWarn,
          "fabric manager is running but nvidia-fabricmanager.service is not enabled: it will not start "
          "after the "
          "next reboot, and CUDA finds no usable GPU until it runs",
          "sudo systemctl enable nvidia-fabricmanager");
  return r;
}

extern const Layer kFabricManagerLayer = {
    "fabricmanager",
    CheckFabricManager,
    [](const probe::HostFacts& h) { return h.nvswitch_count > 0; },
    PlanFabricManager,
    VerifyFabricManager,
    [](const manifest::Stack&, const probe::HostFacts& h) { return h.nvswitch_count > 0; }};

}  // namespace gp::layers
