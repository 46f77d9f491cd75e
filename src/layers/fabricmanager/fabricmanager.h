// The fabricmanager layer's plan and verify (its check is CheckFabricManager, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "host/files.h"
#include "plan/layer_plan.h"
#include "util/version.h"
#include "verdict/report.h"

namespace gp::layers {

// The modules-load.d file that loads ib_umad at every boot (NVLSM on HGX Blackwell).
inline constexpr const char* kIbUmadModulesLoad = "/etc/modules-load.d/gpuprep-ib_umad.conf";

plan::LayerPlan PlanFabricManager(const plan::LayerContext& ctx);
// What the plan reads of the file half of the host (layers/table.h Layer::reads), on HGX Blackwell only:
// kIbUmadModulesLoad, and whether the host's apt lists publish the running kernel's extra modules where
// ib_umad is neither loaded nor available.
void FabricManagerReads(const manifest::Stack& stack, const probe::HostFacts& facts, host::Reads& out);
void VerifyFabricManager(const apply::VerifyEnv& env, verdict::LayerReport& r);

// Whether the host needs Fabric Manager: NVSwitches on its PCI bus, or an HGX Blackwell baseboard (its
// NVSwitches sit behind ConnectX-7 bridge functions; probe/host.h FabricInfo).
bool NeedsFabricManager(const probe::HostFacts& host);
bool HgxBlackwell(const probe::HostFacts& host);

// Why driver `driver` cannot run this HGX Blackwell platform ("" when it can, or the host is none): NVIDIA's
// GPU Operator platform notes require driver 570.133.20 or later on HGX B200.
std::string PlatformDriverProblem(const probe::HostFacts& host, const Version& driver);

// The stack's NVLSM entry among the driver's fabric manager packages (NVIDIA's NVLink Subnet Manager, which
// HGX Blackwell needs beside Fabric Manager and which is versioned on its own); nullptr when it names none.
const manifest::AptPackage* NvlsmEntry(const manifest::Stack& stack);
// The fabric packages (manifest::FabricPackage: nvlsm, libibumad3) this host needs: all of them on HGX
// Blackwell, none elsewhere.
std::vector<manifest::AptPackage> FabricPackagesFor(const manifest::Stack& stack,
                                                    const probe::HostFacts& host);
// Every package of the layer this host needs: the fabric manager's, and on HGX Blackwell its fabric packages.
std::vector<manifest::AptPackage> LayerPackagesFor(const manifest::Stack& stack,
                                                   const probe::HostFacts& host);
// The embedded stack that succeeds `stack` (manifest::Succeeds) and pins NVLSM; "" when none does.
std::string NvlsmSuccessor(const manifest::Stack& stack);
// The upstream version the stack pins NVLSM at (its exact version's upstream part, else its `upstream`); ""
// when it pins none.
std::string NvlsmPin(const manifest::Stack& stack);

}  // namespace gp::layers
