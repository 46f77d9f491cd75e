// container_toolkit layer: the NVIDIA Container Toolkit's packages installed at one version (1.18+ requires
// an exact match), no version below a release that fixed a published CVE (Compat.toolkit_advisories), the
// stack's pin, and Docker reaching the GPUs through the nvidia runtime or CDI.
#include "layers/check.h"

#include <algorithm>

#include "layers/container_toolkit/container_toolkit.h"
#include "layers/table.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

// NVIDIA's install guide installs these four at one version
// (NVIDIA/cloud-native-docs, container-toolkit/install-guide.md: NVIDIA_CONTAINER_TOOLKIT_VERSION for all
// four).
const std::vector<std::string> kDefaultPackages = {"nvidia-container-toolkit",
                                                   "nvidia-container-toolkit-base",
                                                   "libnvidia-container-tools", "libnvidia-container1"};

std::optional<std::string> InstalledVersion(const probe::HostFacts& h, const std::string& name) {
  auto it = h.toolkit.packages.find(name);
  if (it != h.toolkit.packages.end() && !it->second.empty()) return it->second;
  auto p = h.packages.find(name);
  if (p != h.packages.end() && !p->second.version.empty()) return p->second.version;
  return std::nullopt;
}

void CheckAdvisories(const CheckInput& in, const Version& tv, LayerReport& r) {
  std::vector<std::string> parts;
  Version newest_fix;
  for (const auto& adv : in.compat.toolkit_advisories) {
    if (tv >= adv.fixed_in) continue;
    parts.push_back(Join(adv.cves, ", ") + " (fixed in " + adv.fixed_in.str() + ")");
    if (adv.fixed_in > newest_fix) newest_fix = adv.fixed_in;
  }
  if (parts.empty()) return;
  const manifest::Pinned& pin = in.stack.container_toolkit.version;
  std::string fix =
      pin.known() && *pin.version >= newest_fix
          ? ToolkitInstallFix(in.stack.container_toolkit)
          : "choose a stack with container toolkit " + newest_fix.str() + " or later: gpuprep manifest list";
  r.Add("container_toolkit.cve", Status::kFail,
        "toolkit " + tv.str() + " is affected by " + Join(parts, "; "), fix);
}

void CheckRuntime(const probe::DockerInfo& d, LayerReport& r) {
  if (!d.cli_found && !d.engine_reachable) return;  // the docker layer reports that
  const auto& runtimes = d.engine_reachable ? d.runtimes : d.daemon_json_runtimes;
  bool nvidia = std::find(runtimes.begin(), runtimes.end(), "nvidia") != runtimes.end();
  bool cdi = d.cdi || (!d.engine_reachable && !d.cdi_devices.empty());
  if (nvidia)
    r.Add("container_toolkit.runtime", Status::kOk, "Docker has the nvidia runtime");
  else if (cdi)
    r.Add("container_toolkit.cdi", Status::kOk, "Docker reaches the GPUs through CDI");
  else
    r.Add("container_toolkit.not-configured", Status::kFail,
          "Docker has no nvidia runtime and no CDI spec for the GPUs", ApplyFix("container_toolkit"));
}

// The toolkit's packages as the host has them.
struct ToolkitPackageSurvey {
  std::vector<std::string> missing;  // not installed
  std::vector<std::string> have;     // installed, as "name version"
  std::string first_version;         // the first installed package's version
  bool differ = false;               // another installed package is at another version
};

// The stack's toolkit packages (NVIDIA's four when it names none) surveyed on the host.
ToolkitPackageSurvey SurveyToolkitPackages(const CheckInput& in) {
  std::vector<std::string> names;
  for (const auto& p : in.stack.container_toolkit.packages) names.push_back(p.name);
  if (names.empty()) names = kDefaultPackages;
  ToolkitPackageSurvey out;
  for (const auto& name : names) {
    auto v = InstalledVersion(in.host, name);
    if (!v) {
      out.missing.push_back(name);
      continue;
    }
    out.have.push_back(name + " " + *v);
    if (out.first_version.empty())
      out.first_version = *v;
    else if (*v != out.first_version)
      out.differ = true;
  }
  return out;
}

// Some packages installed: the missing ones and a version skew fail, else the toolkit is installed at one
// version `tv`.
void CheckToolkitPackages(const manifest::ComponentSpec& spec, const ToolkitPackageSurvey& pkgs,
                          const std::optional<Version>& tv, LayerReport& r) {
  if (!pkgs.missing.empty())
    r.Add("container_toolkit.packages-missing", Status::kFail,
          "toolkit packages missing: " + Join(pkgs.missing, ", "), ToolkitInstallFix(spec));
  if (pkgs.differ)
    r.Add("container_toolkit.version-skew", Status::kFail,
          "toolkit packages at different versions (" + Join(pkgs.have, ", ") + ")", ToolkitInstallFix(spec));
  if (pkgs.missing.empty() && !pkgs.differ)
    r.Add("container_toolkit.installed", Status::kOk,
          "toolkit " + (tv ? tv->str() : pkgs.first_version) + " installed, " +
              std::to_string(pkgs.have.size()) + " packages at one version");
}

// dockerd registers its GPU driver only if the hook is on PATH when it starts (moby
// daemon/nvidia_linux.go).
void CheckHookSeen(const CheckInput& in, LayerReport& r) {
  if (in.host.docker.started_before_hook && in.stack.docker.gpu_access != "cdi")
    r.Add(
        "container_toolkit.engine-before-hook", Status::kFail,
        "Docker started before nvidia-container-runtime-hook was installed: `docker run --gpus` fails (could "
        "not select device driver \"\" with capabilities: [[gpu]]) until Docker restarts",
        "sudo systemctl restart docker");
}

}  // namespace

LayerReport CheckContainerToolkit(const CheckInput& in) {
  LayerReport r;
  r.name = "container_toolkit";
  const manifest::ComponentSpec& spec = in.stack.container_toolkit;
  if (spec.version.known()) r.wanted = spec.version.version->str();
  const ToolkitPackageSurvey pkgs = SurveyToolkitPackages(in);
  auto tv = ParseFound(DebVersion::Parse(pkgs.first_version).upstream);
  if (tv) r.found = tv->str();
  if (!spec.enabled) {
    r.Add("container_toolkit.not-in-stack", Status::kSkip,
          "the container toolkit is not part of stack " + in.stack.name);
    return r;
  }
  if (spec.version.unknown) {
    r.Add("container_toolkit.version-unknown", Status::kSkip,
          "the stack's container toolkit version is unknown: " + spec.version.reason);
    return r;
  }
  if (pkgs.have.empty()) {
    r.Add("container_toolkit.missing", Status::kFail, "NVIDIA Container Toolkit not installed",
          ToolkitInstallFix(spec));
    return r;
  }
  CheckToolkitPackages(spec, pkgs, tv, r);
  if (tv) {
    CheckAdvisories(in, *tv, r);
    if (spec.version.known() && *tv < *spec.version.version)
      r.Add("container_toolkit.outdated", Status::kWarn,
            "toolkit " + tv->str() + " is older than the stack's " + spec.version.version->str(),
            ToolkitInstallFix(spec));
  }
  CheckRuntime(in.host.docker, r);
  CheckHookSeen(in, r);
  return r;
}

extern const Layer kContainerToolkitLayer = {"container_toolkit",
                                             CheckContainerToolkit,
                                             nullptr,
                                             PlanContainerToolkit,
                                             VerifyContainerToolkit,
                                             [](const manifest::Stack& s, const probe::HostFacts& h) {
                                               return h.docker.engine_reachable &&
                                                      s.container_toolkit.enabled;
                                             },
                                             ContainerToolkitReads};

}  // namespace gp::layers
