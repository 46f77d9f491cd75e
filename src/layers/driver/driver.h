// The driver layer's plan and verify (its check is CheckDriver, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "host/files.h"
#include "layers/check.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanDriver(const plan::LayerContext& ctx);
// What the plan reads of the file half of the host (layers/table.h Layer::reads): whether the host's apt
// lists publish the kernel packages it may add where DKMS builds the driver (the running kernel's headers,
// each installed kernel meta's headers meta, the headers of each installed kernel without a module).
void DriverReads(const manifest::Stack& stack, const probe::HostFacts& facts, host::Reads& out);
void VerifyDriver(const apply::VerifyEnv& env, verdict::LayerReport& r);
// Every installed kernel has an nvidia module for the driver, and the next boot's most of all (kernels.cc).
void CheckKernels(const CheckInput& in, verdict::LayerReport& r);
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION of each GPU, one finding each (recovery.cc).
void CheckRecoveryActions(const CheckInput& in, verdict::LayerReport& r);
// doctor --health's driver row: the recovery actions, or that none is asked (or none could be read).
verdict::LayerReport DriverHealth(const CheckInput& in);
// Who moved a package, for a finding's message: "apt installed linux-image-K V on DATE, run by
// unattended-upgrades (Commandline: ...; FILE:LINE)"; "" when the run was not found (kernels.cc).
std::string WhoMoved(const probe::AptRun& run);
// Where the driver is built by DKMS (future_kernels.cc): whether each installed kernel meta has its headers
// meta (doctor), and the plan's part: those headers metas, and each installed kernel without an nvidia
// module given its headers and a DKMS build. `details` gets what the plan adds, one phrase each.
bool DriverUsesDkms(const manifest::Stack& stack, const probe::HostFacts& facts);
void CheckFutureKernels(const CheckInput& in, verdict::LayerReport& r);
void PlanFutureKernels(const plan::LayerContext& ctx, plan::LayerPlan& out,
                       std::vector<std::string>& details);

}  // namespace gp::layers
