// Active verification, after each layer in apply and as `gpuprep verify`: what a layer's verify function
// (layers/<layer>/verify.cc) reads, and the checks several of them share. Each layer's own checks (the
// loaded kernel module and NVML agree, CUDA initialises, the toolkit is at the pinned major.minor, cuDNN and
// NCCL load at the pinned versions, the container checks) are defined beside its plan. Nothing is executed.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "probe/host.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "verdict/report.h"

namespace gp::apply {

struct VerifyEnv {
  const sys::Fs* fs = nullptr;
  sys::NativeLibs* native = nullptr;  // null (--root): library checks are `skip`
  const manifest::Stack* stack = nullptr;
  const probe::HostFacts* facts = nullptr;  // PCI GPUs, NVSwitches
  sys::UnixHttp* docker = nullptr;          // the Engine API (container checks); null (--root): `skip`
};

// One layer's active check, given by its row of the table of layers (layers/table.h VerifyLayer); the
// executor calls it for each verify step. A fail finding carries the fix.
using VerifyFn = std::function<verdict::LayerReport(const std::string& layer, const VerifyEnv& env)>;

// What several layers' verify functions share:
// the pin as text ("" when the stack leaves it open);
std::string PinText(const manifest::Pinned& p);
// the layer's installed packages are held and pinned at their installed version in gpuprep's preferences
// file (what apply leaves; an upgrade cannot move them);
void PinsAndHolds(const VerifyEnv& env, const std::vector<manifest::AptPackage>& pkgs,
                  verdict::LayerReport& r);
// cuDNN (`nccl` false) or NCCL loads from the toolkit's library directories at the pinned release (and,
// for cuDNN with `source: redist`, from gpuprep's install of NVIDIA's archive).
void VerifyLibrary(const VerifyEnv& env, const char* what, const manifest::Pinned& pin,
                   verdict::LayerReport& r, bool nccl);

}  // namespace gp::apply
