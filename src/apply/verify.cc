#include "apply/verify.h"

#include <set>

#include "apply/verify_container.h"
#include "apt/dpkg_status.h"
#include "apt/preferences.h"
#include "layers/rules.h"
#include "plan/host_state.h"
#include "probe/parsers.h"
#include "redist/request.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::apply {
namespace {

using layers::LayerReport;
using layers::Status;

std::string Pin(const manifest::Pinned& p) { return p.version ? p.version->str() : ""; }

// Does `got` ("8.9.7") match the pin ("8.9.7.29") on the parts the library reports?
bool SameRelease(const std::string& got, const manifest::Pinned& pin) {
  auto g = Version::Parse(got);
  if (!g || !pin.version) return false;
  return g->Prefix(3) == pin.version->Prefix(3);
}

void Driver(const VerifyEnv& env, LayerReport& r) {
  const size_t pci = env.facts->gpus.size();
  r.wanted = Pin(env.stack->driver.version);
  auto module = plan::LoadedModuleVersion(*env.fs);
  if (!module) {
    r.Add(Status::kFail, "no nvidia kernel module is loaded",
          "reboot (after gpuprep apply the resume unit finishes the setup), or: sudo modprobe nvidia");
    return;
  }
  r.found = *module;
  if (!r.wanted.empty() && *module != r.wanted)
    r.Add(Status::kFail, "the loaded kernel module is " + *module + " but the stack pins " + r.wanted,
          "sudo gpuprep apply --yes");
  if (!env.native) {
    if (r.status != Status::kFail) r.Add(Status::kOk, "kernel module " + *module + " is loaded");
    r.Add(Status::kSkip, "NVML not loaded (--root: nothing of the live host is loaded)");
    return;
  }
  auto nvml = env.native->Nvml();
  if (!nvml.loaded) {
    r.Add(Status::kFail, "libnvidia-ml could not be loaded" + (nvml.error.empty() ? "" : ": " + nvml.error),
          layers::ApplyFix("driver"));
    return;
  }
  if (!nvml.error.empty()) {
    r.Add(Status::kFail, "NVML: " + nvml.error,
          nvml.error.find("mismatch") != std::string::npos
              ? "reboot so the kernel module matches the libraries"
              : "gpuprep doctor");
    return;
  }
  if (nvml.driver_version && *nvml.driver_version != *module)
    r.Add(Status::kFail, "kernel module " + *module + " but NVML reports driver " + *nvml.driver_version,
          "reboot so the kernel module matches the libraries");
  const long count = nvml.device_count.value_or(-1);
  if (count != static_cast<long>(pci))
    r.Add(Status::kFail,
          "NVML counts " + std::to_string(count) + " GPUs but PCI shows " + std::to_string(pci),
          "gpuprep doctor (a GPU may have fallen off the bus; check dmesg for Xid errors)");
  if (r.status != Status::kFail)
    r.Add(Status::kOk, "kernel module and NVML agree on " + *module + "; NVML sees " + std::to_string(count) +
                           " of " + std::to_string(pci) + " GPUs");
}

// The toolkit itself: its version.json (the pinned major.minor's directory first, then /usr/local/cuda) and
// libcudart loaded from it, both at the stack's major.minor. A stack whose CUDA is optional may lack it.
void Toolkit(const VerifyEnv& env, LayerReport& r) {
  const manifest::ComponentSpec& spec = env.stack->cuda;
  if (!spec.enabled || !spec.version.known()) return;
  const Version& pin = *spec.version.version;
  const std::string minor = pin.Prefix(2).str();
  std::string home;
  probe::CudaVersionJson vj;
  const std::string fix = layers::ApplyFix("cuda");
  if (spec.source == "redist") {
    // gpuprep's install of NVIDIA's archives: current -> the version whose redistrib JSON it verified (the
    // archives carry no version.json); libcudart below must load from it at that version.
    const std::string current = redist::CurrentLinkFor("cuda");
    auto target = env.fs->ReadLink(current);
    if (!target || !env.fs->IsDir(current + "/lib"))
      return r.Add(Status::kFail, "the CUDA toolkit is not installed in " + current + " (source: redist)",
                   fix);
    home = current;
    vj.version = *target;
  }
  for (const std::string& dir : {"/usr/local/cuda-" + minor, std::string("/usr/local/cuda")}) {
    if (!home.empty()) break;
    if (auto text = env.fs->ReadPrefix(dir + "/version.json", 1 << 20)) {
      vj = probe::ParseCudaVersionJson(*text);
      if (!vj.version.empty()) {
        home = dir;
        break;
      }
    }
  }
  if (home.empty()) {
    if (spec.optional)
      return r.Add(Status::kSkip, "the CUDA toolkit is not installed (optional in this stack)");
    return r.Add(Status::kFail,
                 "the CUDA toolkit is not installed (no version.json under /usr/local/cuda-" + minor +
                     " or /usr/local/cuda)",
                 fix);
  }
  auto have = Version::Parse(vj.version);
  if (!have || have->Prefix(2) != pin.Prefix(2))
    return r.Add(Status::kFail,
                 "the CUDA toolkit in " + home + " is " + vj.version + " but the stack pins " + pin.str(),
                 fix);
  auto rt = env.native->CudaRuntimeVersion({home + "/lib64", home + "/lib"});
  if (!rt.loaded || !rt.value)
    return r.Add(Status::kFail,
                 "libcudart of the toolkit in " + home + " could not be loaded" +
                     (rt.error.empty() ? "" : ": " + rt.error),
                 fix);
  const std::string runtime = CudaVersionFromCode(*rt.value);
  auto rv = Version::Parse(runtime);
  if (!rv || rv->Prefix(2) != pin.Prefix(2))
    return r.Add(Status::kFail,
                 "libcudart " + runtime + " loaded from " + rt.path + " but the stack pins " + pin.str(),
                 fix);
  r.Add(Status::kOk,
        "CUDA toolkit " + vj.version + " in " + home + "; libcudart " + runtime + " loads (" + rt.path + ")");
}

void Cuda(const VerifyEnv& env, LayerReport& r) {
  const size_t pci = env.facts->gpus.size();
  r.wanted = Pin(env.stack->cuda.version);
  if (!env.native)
    return r.Add(Status::kSkip, "libcuda not loaded (--root: nothing of the live host is loaded)");
  auto cu = env.native->CudaDriver();
  if (!cu.loaded)
    return r.Add(Status::kFail, "libcuda could not be loaded" + (cu.error.empty() ? "" : ": " + cu.error),
                 layers::ApplyFix("driver"));
  if (cu.driver_api_version) r.found = CudaVersionFromCode(*cu.driver_api_version);
  if (!cu.device_count)
    return r.Add(Status::kFail, "cuInit failed" + (cu.error.empty() ? "" : ": " + cu.error),
                 "reboot if the driver was just installed, else gpuprep doctor");
  if (*cu.device_count != static_cast<long>(pci))
    return r.Add(
        Status::kFail,
        "cuDeviceGetCount says " + std::to_string(*cu.device_count) + " but PCI shows " + std::to_string(pci),
        "gpuprep doctor");
  r.Add(Status::kOk, "cuInit succeeded; " + std::to_string(*cu.device_count) + " CUDA devices");
  Toolkit(env, r);
}

void Library(const VerifyEnv& env, const char* what, const manifest::Pinned& pin, LayerReport& r, bool nccl) {
  r.wanted = Pin(pin);
  if (!env.native)
    return r.Add(Status::kSkip,
                 std::string(what) + " not loaded (--root: nothing of the live host is loaded)");
  const std::vector<std::string> dirs = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  auto call = nccl ? env.native->NcclVersion(dirs) : env.native->CudnnVersion(dirs);
  const std::string layer = nccl ? "nccl" : "cudnn";
  if (!call.loaded || !call.value)
    return r.Add(Status::kFail,
                 std::string(what) + " could not be loaded" + (call.error.empty() ? "" : ": " + call.error),
                 layers::ApplyFix(layer));
  const std::string got = nccl ? NcclVersionFromCode(*call.value) : CudnnVersionFromCode(*call.value);
  r.found = got;
  if (pin.version && !SameRelease(got, pin))
    return r.Add(
        Status::kFail,
        std::string(what) + " " + got + " loaded from " + call.path + " but the stack pins " + r.wanted,
        layers::ApplyFix(layer));
  // `source: redist`: the library the loader finds must be gpuprep's install of NVIDIA's archive.
  if (!nccl && env.stack->cudnn.source == "redist" &&
      call.path.find("/opt/gpuprep/cudnn/") == std::string::npos)
    return r.Add(Status::kFail,
                 std::string(what) + " " + got + " loads from " + call.path +
                     ", not the stack's redistributable install in /opt/gpuprep/cudnn",
                 layers::ApplyFix("cudnn"));
  r.Add(Status::kOk, std::string(what) + " " + got + " loads (" + call.path + ")");
}

// The fabric manager must be installed at exactly the loaded driver's version and enabled. The
// version is read from dpkg now for the stack's pinned packages (apply may just have installed them), else
// taken from the probed facts; the stack's pin is never reported as what is installed.
void FabricManager(const VerifyEnv& env, LayerReport& r) {
  if (env.facts->nvswitch_count == 0) return r.Add(Status::kSkip, "no NVSwitch on this host");
  const auto& pins = env.stack->driver.fabricmanager_packages;
  auto module = plan::LoadedModuleVersion(*env.fs);
  if (!module && env.facts->driver.module.loaded && !env.facts->driver.module.version.empty())
    module = env.facts->driver.module.version;
  std::string fix = pins.empty()
                        ? "install NVIDIA's fabric manager at the loaded driver's version" +
                              (module ? " (" + *module + ")" : std::string()) +
                              " (the stack pins no fabric manager package), then: sudo systemctl enable "
                              "--now nvidia-fabricmanager.service"
                        : layers::ApplyFix("fabricmanager");
  if (module) r.wanted = *module;
  std::string name = "fabric manager", installed;
  if (!pins.empty()) {
    std::set<std::string> names;
    for (const auto& p : pins) names.insert(p.name);
    auto dpkg = apt::ReadDpkgStatus(*env.fs, names);
    for (const auto& p : pins) {
      auto it = dpkg.find(p.name);
      if (it == dpkg.end() || !it->second.installed)
        return r.Add(Status::kFail, p.name + " is not installed", fix);
      name = p.name;
      installed = DebVersion::Parse(it->second.version).upstream;
    }
  } else if (env.facts->fabricmanager.installed) {
    installed = DebVersion::Parse(env.facts->fabricmanager.version).upstream;
  }
  if (installed.empty()) return r.Add(Status::kFail, "no fabric manager is installed", fix);
  r.found = installed;
  if (!module)
    return r.Add(Status::kFail,
                 name + " " + installed + " is installed but no nvidia kernel module is loaded to match it",
                 "reboot (after gpuprep apply the resume unit finishes the setup), or: sudo modprobe nvidia");
  if (installed != *module)
    return r.Add(Status::kFail, name + " " + installed + " does not match the loaded driver " + *module, fix);
  if (!plan::UnitEnabled(*env.fs, "nvidia-fabricmanager.service"))
    return r.Add(Status::kFail, "nvidia-fabricmanager.service is not enabled",
                 "sudo systemctl enable --now nvidia-fabricmanager.service");
  r.Add(Status::kOk, "fabric manager " + installed + " installed, matches the loaded driver and is enabled");
}

// The layer's packages that are installed are held and pinned at their installed version in gpuprep's
// preferences file (what apply leaves; an upgrade cannot move them).
void PinsAndHolds(const VerifyEnv& env, const std::vector<manifest::AptPackage>& pkgs, LayerReport& r) {
  if (pkgs.empty()) return;
  std::set<std::string> names;
  for (const auto& p : pkgs) names.insert(p.name);
  auto dpkg = apt::ReadDpkgStatus(*env.fs, names);
  auto pins = apt::ParsePreferences(env.fs->Read(apt::kPreferencesPath).value_or(""));
  std::vector<std::string> unheld, unpinned;
  size_t installed = 0;
  for (const auto& p : pkgs) {
    auto it = dpkg.find(p.name);
    if (it == dpkg.end() || !it->second.installed) continue;
    ++installed;
    if (!it->second.held) unheld.push_back(p.name);
    auto pin = pins.find(p.name);
    if (pin == pins.end() || pin->second != it->second.version)
      unpinned.push_back(p.name + "=" + it->second.version);
  }
  if (installed == 0) return;  // not installed through these packages: the layer's own checks say so
  if (!unheld.empty())
    r.Add(r.name + ".not-held", Status::kFail,
          "not held: " + Join(unheld, ", ") + " (an upgrade could move them)", layers::ApplyFix(r.name));
  if (!unpinned.empty())
    r.Add(r.name + ".not-pinned", Status::kFail,
          "not pinned in " + std::string(apt::kPreferencesPath) + ": " + Join(unpinned, ", "),
          layers::ApplyFix(r.name));
  if (unheld.empty() && unpinned.empty())
    r.Add(r.name + ".pinned", Status::kOk, "packages held and pinned at their installed versions");
}

}  // namespace

LayerReport VerifyLayer(const std::string& layer, const VerifyEnv& env) {
  LayerReport r;
  r.name = layer;
  const manifest::Stack& s = *env.stack;
  if (layer == "driver")
    PinsAndHolds(env, s.driver.packages, r);
  else if (layer == "fabricmanager")
    PinsAndHolds(env, s.driver.fabricmanager_packages, r);
  else if (layer == "cuda")
    PinsAndHolds(env, s.cuda.packages, r);
  else if (layer == "cudnn")
    PinsAndHolds(env, s.cudnn.packages, r);
  else if (layer == "nccl")
    PinsAndHolds(env, s.nccl.packages, r);
  if (layer == "driver")
    Driver(env, r);
  else if (layer == "fabricmanager")
    FabricManager(env, r);
  else if (layer == "cuda")
    Cuda(env, r);
  else if (layer == "cudnn")
    Library(env, "cuDNN", env.stack->cudnn.version, r, false);
  else if (layer == "nccl")
    Library(env, "NCCL", env.stack->nccl.version, r, true);
  else if (layer == "docker" || layer == "container_toolkit" || layer == "image")
    VerifyContainerLayer(layer, env, r);
  else
    r.Add(Status::kSkip, "verify has no active check for this layer");
  return r;
}

}  // namespace gp::apply
