// The driver layer's plan and verify (its check is CheckDriver, layers/check.h).
#pragma once
#include "apply/verify.h"
#include "layers/check.h"
#include "plan/layer_plan.h"
#include "verdict/report.h"

namespace gp::layers {

plan::LayerPlan PlanDriver(const plan::LayerContext& ctx);
void VerifyDriver(const apply::VerifyEnv& env, verdict::LayerReport& r);
// Every installed kernel has an nvidia module for the driver, and the next boot's most of all (kernels.cc).
void CheckKernels(const CheckInput& in, verdict::LayerReport& r);
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
