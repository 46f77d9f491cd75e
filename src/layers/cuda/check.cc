// cuda layer: the CUDA toolkit on the host against the stack's pin, the GPUs' compute capabilities, and
// (when it differs from the stack's CUDA, which the driver layer checks) the driver.
#include "layers/check.h"

#include "layers/cuda/cuda.h"
#include "layers/table.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckCuda(const CheckInput& in) {
  LayerReport r;
  r.name = "cuda";
  const manifest::ComponentSpec& spec = in.stack.cuda;
  const probe::Component& host = in.host.cuda;
  if (host.found && !host.version.empty()) r.found = host.version;
  if (spec.version.known()) r.wanted = spec.version.version->str();
  if (!spec.enabled) {
    r.Add("cuda.not-in-stack", Status::kSkip, "CUDA is not part of stack " + in.stack.name);
    return r;
  }
  if (spec.version.unknown) {
    r.Add("cuda.version-unknown", Status::kSkip,
          "the stack's CUDA version is unknown: " + spec.version.reason);
    return r;
  }
  const Version& want = *spec.version.version;
  CheckCudaAgainstGpus(in.compat, in.host, want, "the stack's CUDA " + want.str(),
                       "choose a stack whose CUDA supports these GPUs: gpuprep manifest list", r);

  std::optional<Version> have = host.found ? ParseFound(host.version) : std::nullopt;
  if (!have) {
    if (spec.optional)
      r.Add("cuda.optional-missing", Status::kSkip,
            "CUDA toolkit not installed (optional in this stack: containers bring their own)");
    else
      r.Add("cuda.missing", Status::kFail, "CUDA toolkit not installed", ApplyFix("cuda"));
    return r;
  }
  // `source: redist`: the stack's toolkit is gpuprep's install of NVIDIA's archives under /opt/gpuprep/cuda;
  // a toolkit found elsewhere (apt, a runfile, pip wheels) is not it.
  if (spec.source == "redist" && host.path.rfind("/opt/gpuprep/cuda/", 0) != 0)
    r.Add("cuda.not-redist", Status::kFail,
          "CUDA " + host.version + " is in " + (host.path.empty() ? host.source : host.path) +
              ", not the stack's redistributable install in /opt/gpuprep/cuda (source: redist)",
          ApplyFix("cuda"));
  std::string installed = "installed CUDA " + have->str();
  bool same_release = have->Prefix(2) == want.Prefix(2);
  if (have->major() != want.major())
    r.Add("cuda.major-mismatch", Status::kFail,
          installed + " is another major than the stack's " + want.str(), ApplyFix("cuda"));
  else if (!same_release)
    r.Add("cuda.version-mismatch", Status::kWarn, installed + " differs from the stack's " + want.str(),
          ApplyFix("cuda"));
  else
    r.Add("cuda.match", Status::kOk, installed + " matches the stack's " + want.str());

  if (!same_release) {
    CheckCudaAgainstGpus(in.compat, in.host, *have, installed, ApplyFix("cuda"), r);
    if (auto dv = HostDriverVersion(in.host)) {
      CudaVerdict v = DriverRunsCuda(in.compat, *dv, *have, installed, AllDatacenter(in.compat, in.host), {});
      if (v.status != Status::kOk) r.Add("cuda.driver-compat", v.status, v.message, ApplyFix("driver"));
    }
  }
  return r;
}

// The plan is the CUDA components' (plan/layer_plan.h PlanComponent: the stack's apt packages at their
// pins, or with `source: redist` NVIDIA's archives into /opt/gpuprep/cuda/).
extern const Layer kCudaLayer = {
    "cuda",
    CheckCuda,
    nullptr,
    [](const plan::LayerContext& ctx) { return plan::PlanComponent(ctx, "cuda", ctx.stack->cuda); },
    VerifyCuda,
    [](const manifest::Stack& s, const probe::HostFacts&) { return s.cuda.enabled; },
    [](const manifest::Stack& s, const probe::HostFacts& h, host::Reads& r) {
      RedistReads("cuda", s.cuda, h, r);
    }};

}  // namespace gp::layers
