// The fabricmanager layer's plan and verify (its check is CheckFabricManager, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanFabricManager(const plan::LayerContext& ctx);
void VerifyFabricManager(const apply::VerifyEnv& env, verdict::LayerReport& r);

// Whether the host needs Fabric Manager: NVSwitches on its PCI bus, or an HGX Blackwell baseboard (its
// NVSwitches sit behind ConnectX-7 bridge functions; probe/host.h FabricInfo).
bool NeedsFabricManager(const probe::HostFacts& host);
bool HgxBlackwell(const probe::HostFacts& host);

// The stack's NVLSM entry among the driver's fabric manager packages (NVIDIA's NVLink Subnet Manager, which
// HGX Blackwell needs beside Fabric Manager and which is versioned on its own); nullptr when it names none.
const manifest::AptPackage* NvlsmEntry(const manifest::Stack& stack);
// The upstream version the stack pins NVLSM at (its exact version's upstream part, else its `upstream`); ""
// when it pins none.
std::string NvlsmPin(const manifest::Stack& stack);

}  // namespace gp::layers
