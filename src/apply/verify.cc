#include "apply/verify.h"

#include <set>

#include "apt/dpkg_status.h"
#include "apt/preferences.h"
#include "util/strings.h"
#include "util/version.h"
#include "verdict/rules.h"

namespace gp::apply {

using verdict::LayerReport;
using verdict::Status;

std::string PinText(const manifest::Pinned& p) { return p.version ? p.version->str() : ""; }

namespace {

// Does `got` ("8.9.7") match the pin ("8.9.7.29") on the parts the library reports?
bool SameRelease(const std::string& got, const manifest::Pinned& pin) {
  auto g = Version::Parse(got);
  if (!g || !pin.version) return false;
  return g->Prefix(3) == pin.version->Prefix(3);
}

}  // namespace

void VerifyLibrary(const VerifyEnv& env, const char* what, const manifest::Pinned& pin, LayerReport& r,
                   bool nccl) {
  r.wanted = PinText(pin);
  if (!env.native)
    return r.Add(Status::kSkip,
                 std::string(what) + " not loaded (--root: nothing of the live host is loaded)");
  const std::vector<std::string> dirs = {"/usr/local/cuda/lib64", "/usr/local/cuda/lib"};
  auto call = nccl ? env.native->NcclVersion(dirs) : env.native->CudnnVersion(dirs);
  const std::string layer = nccl ? "nccl" : "cudnn";
  if (!call.loaded || !call.value)
    return r.Add(Status::kFail,
                 std::string(what) + " could not be loaded" + (call.error.empty() ? "" : ": " + call.error),
                 verdict::ApplyFix(layer));
  const std::string got = nccl ? NcclVersionFromCode(*call.value) : CudnnVersionFromCode(*call.value);
  r.found = got;
  if (pin.version && !SameRelease(got, pin))
    return r.Add(
        Status::kFail,
        std::string(what) + " " + got + " loaded from " + call.path + " but the stack pins " + r.wanted,
        verdict::ApplyFix(layer));
  // `source: redist`: the library the loader finds must be gpuprep's install of NVIDIA's archive.
  if (!nccl && env.stack->cudnn.source == "redist" &&
      call.path.find("/opt/gpuprep/cudnn/") == std::string::npos)
    return r.Add(Status::kFail,
                 std::string(what) + " " + got + " loads from " + call.path +
                     ", not the stack's redistributable install in /opt/gpuprep/cudnn",
                 verdict::ApplyFix("cudnn"));
  r.Add(Status::kOk, std::string(what) + " " + got + " loads (" + call.path + ")");
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
          "not held: " + Join(unheld, ", ") + " (an upgrade could move them)", verdict::ApplyFix(r.name));
  if (!unpinned.empty())
    r.Add(r.name + ".not-pinned", Status::kFail,
          "not pinned in " + std::string(apt::kPreferencesPath) + ": " + Join(unpinned, ", "),
          verdict::ApplyFix(r.name));
  if (unheld.empty() && unpinned.empty())
    r.Add(r.name + ".pinned", Status::kOk, "packages held and pinned at their installed versions");
}

}  // namespace gp::apply
