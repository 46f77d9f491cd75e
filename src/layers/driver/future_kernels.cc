// The kernels to come and the installed ones without a module, where the driver is built by DKMS: the
// headers meta package of each installed kernel meta, never pinned or held, so each kernel apt brings comes
// with the headers DKMS builds against; and each installed kernel without an nvidia module given its
// headers and a DKMS build. The flavour comes from the installed meta package, never from uname: a 22.04
// host on its HWE kernel runs 6.8 while linux-headers-generic would bring the 5.15 series' headers.
#include <algorithm>

#include "apt/availability.h"
#include "layers/driver/driver.h"
#include "plan/kernel_headers.h"
#include "probe/boot.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::layers {

using plan::LayerPlan;

bool DriverUsesDkms(const manifest::Stack& stack, const probe::HostFacts& facts) {
  return !stack.driver.signed_modules || facts.driver.dkms_module;
}

void PlanFutureKernels(const plan::LayerContext& ctx, LayerPlan& out, std::vector<std::string>& details) {
  const probe::HostFacts& facts = *ctx.facts;
  if (!DriverUsesDkms(*ctx.stack, facts)) return;
  std::vector<std::string> add;
  // A kernel package the distribution does not publish is left out: doctor says what that leaves.
  auto want = [&](const std::string& package) {
    if (!ValidDebName(package) ||
        plan::KernelPackageAnswer(*ctx.in, package).state == apt::Availability::kMissing)
      return false;
    add.push_back(package);
    return true;
  };
  std::vector<std::string> metas;
  for (const auto& headers : plan::HeadersMetasToAdd(facts))
    if (want(headers)) metas.push_back(headers);
  if (!metas.empty()) details.push_back("headers for future kernels: " + Join(metas, ", "));
  std::vector<std::string> built;
  for (const probe::InstalledKernel* k : plan::KernelsWithoutModule(facts)) {
    if (!probe::ValidKernelRelease(k->release)) continue;
    if (!k->headers && !want(apt::KernelHeadersPackage(k->release))) continue;
    // A build DKMS already tried and failed is doctor's to explain (its make.log): running it again in
    // apply would fail the same way.
    if (!k->dkms_log.empty()) continue;
    plan::Step s = plan::MakeStep("driver.dkms." + k->release, {"driver"},
                                  "build the nvidia module for installed kernel " + k->release);
    s.actions.push_back(plan::Action::Run({"dkms", "autoinstall", "-k", k->release}));
    out.after_install.push_back(std::move(s));
    built.push_back(k->release);
  }
  if (!built.empty()) details.push_back("nvidia module for installed kernel " + Join(built, ", "));
  out.packages.install.insert(out.packages.install.begin(), add.begin(), add.end());
  out.kernel_packages.insert(out.kernel_packages.end(), add.begin(), add.end());
}

void CheckFutureKernels(const CheckInput& in, verdict::LayerReport& r) {
  const probe::HostFacts& h = in.host;
  if (!h.boot.probed || !DriverUsesDkms(in.stack, h)) return;
  if (!plan::HasKernelImageMeta(h)) {
    if (!h.kernel_images.empty())
      r.Add("driver.kernel-meta-none", verdict::Status::kSkip,
            "no kernel meta package installed (such as linux-image-generic): no new kernel comes by apt, so "
            "none needs a headers meta");
    return;
  }
  const std::vector<std::string> missing = plan::HeadersMetasToAdd(h);
  for (const auto& meta : h.kernel_metas) {
    const std::string headers = apt::KernelHeadersMeta(meta);
    if (headers.empty() || std::find(missing.begin(), missing.end(), headers) == missing.end()) continue;
    r.Add("driver.kernel-headers-meta", verdict::Status::kWarn,
          "kernel meta package " + meta + " is installed without " + headers +
              ": the next kernel it brings comes without headers, so DKMS cannot build the nvidia module for "
              "it and that kernel boots without the GPU driver",
          "sudo apt-get install " + headers + " (or gpuprep apply --only driver)");
  }
}

}  // namespace gp::layers
