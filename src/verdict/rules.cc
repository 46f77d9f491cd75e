#include "verdict/rules.h"

#include <algorithm>
#include <tuple>

#include "manifest/loader.h"
#include "util/strings.h"

namespace gp::verdict {

std::string ApplyFix(const std::string& layer) { return "sudo gpuprep apply --yes --only " + layer; }

DockerFloor DockerGpuFloor(const std::string& gpu_access) {
  if (gpu_access == "cdi") return {"25.0", ">= 25 (CDI)", "CDI devices need Docker 25"};
  return {"19.03", ">= 19.03 (--gpus)", "--gpus needs Docker 19.03"};
}

std::optional<std::string> DockerBelowFloor(const std::string& version, const std::string& gpu_access) {
  const DockerFloor floor = DockerGpuFloor(gpu_access);
  auto v = UpstreamRelease(version);
  if (!v || !(*v < Version::Must(floor.version))) return std::nullopt;
  return "Docker " + v->str() + " is older than " + floor.version + " (" + floor.why + ")";
}

// apply installs the toolkit at the stack's pins (held, from NVIDIA's repository) and registers it in
// daemon.json without losing a key (nvidia-ctk runtime configure drops other "features" keys).
std::string ToolkitInstallFix(const manifest::ComponentSpec&) { return ApplyFix("container_toolkit"); }

std::optional<Version> ParseFound(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return Version::Parse(text);
}

std::optional<Version> HostDriverVersion(const probe::HostFacts& host) {
  if (host.driver.module.loaded)
    if (auto v = ParseFound(host.driver.module.version)) return v;
  return ParseFound(host.driver.userspace_version);
}

const manifest::GpuModel* GpuModelOf(const manifest::Compat& compat, const probe::Gpu& gpu) {
  return compat.GpuByPci(gpu.device_id, gpu.subsystem_vendor_id, gpu.subsystem_device_id);
}

std::vector<const manifest::GpuModel*> HostGpuModels(const manifest::Compat& compat,
                                                     const probe::HostFacts& host) {
  std::vector<const manifest::GpuModel*> out;
  for (const auto& g : host.gpus) {
    const manifest::GpuModel* m = GpuModelOf(compat, g);
    if (m && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  return out;
}

bool AllDatacenter(const manifest::Compat& compat, const probe::HostFacts& host) {
  if (host.gpus.empty()) return false;
  for (const auto& g : host.gpus) {
    const manifest::GpuModel* m = GpuModelOf(compat, g);
    if (!m || !m->datacenter) return false;
  }
  return true;
}

namespace {

// A host's CUDA version may be a component build ("13.0.88" from nvcc, "12.2.20230823" from version.json)
// rather than a toolkit release ("12.2.2"): update numbers are single digits, so a larger third part means
// "some release of major.minor" and the GA row applies.
Version Release(const Version& cuda) {
  if (cuda.size() >= 3 && cuda.patch() >= 10) return cuda.Prefix(2);
  return cuda.size() > 3 ? cuda.Prefix(3) : cuda;
}

bool ForwardCompatNames(const std::vector<Version>& forward_compat, const Version& driver) {
  for (const Version& fc : forward_compat)
    if (fc.major() == driver.major() && driver >= fc) return true;
  return false;
}

}  // namespace

CudaVerdict DriverRunsCuda(const manifest::Compat& compat, const Version& driver, const Version& cuda,
                           const std::string& what, bool datacenter,
                           const std::vector<Version>& forward_compat) {
  CudaVerdict v;
  v.min_driver = compat.MinDriverFor(Release(cuda));
  const std::string d = "driver " + driver.str();
  const manifest::MinorCompat* mvc = compat.MinorCompatFor(static_cast<int>(cuda.major()));
  bool in_mvc = mvc && driver.major() >= static_cast<uint64_t>(mvc->min_branch) &&
                (!mvc->exact_min || driver >= *mvc->exact_min);
  std::string mvc_name = "CUDA " + std::to_string(cuda.major()) + ".x minor-version compatibility";

  if (v.min_driver && driver >= *v.min_driver) {
    v.message = d + " runs " + what + " (needs >= " + v.min_driver->str() + ")";
    return v;
  }
  // From CUDA 13.4 NVIDIA gives a driver branch per CUDA minor rather than a minimum per release.
  const manifest::CudaBranchRow* branch = v.min_driver ? nullptr : compat.DriverBranchFor(cuda);
  const std::string minor = "CUDA " + cuda.Prefix(2).str();
  if (branch && driver.major() >= static_cast<uint64_t>(branch->branch)) {
    v.message = d + " runs " + what + " (" + minor + " needs an R" + std::to_string(branch->branch) +
                " or later driver)";
    return v;
  }
  std::string below =
      v.min_driver ? d + " is below " + what + "'s minimum " + v.min_driver->str()
      : branch ? d + " is older than R" + std::to_string(branch->branch) + ", the driver branch of " + minor
               : "no minimum driver is known for " + what;
  if (in_mvc) {
    v.minor_compat = true;
    v.status = Status::kWarn;
    v.message = below + ": it runs under " + mvc_name + ", without features that need a newer driver";
  } else if (datacenter && ForwardCompatNames(forward_compat, driver)) {
    v.status = Status::kWarn;
    v.message = below + ": it runs on these data-center GPUs only in CUDA forward-compatibility mode";
  } else if (v.min_driver) {
    v.status = Status::kFail;
    v.message = d + " is too old for " + what + " (needs >= " + v.min_driver->str() + ")";
  } else if (mvc) {
    v.status = Status::kFail;
    v.message = d + " is too old for " + what + " (needs >= " +
                (mvc->exact_min ? mvc->exact_min->str() : "R" + std::to_string(mvc->min_branch)) + ")";
  } else {
    v.status = Status::kWarn;
    v.message = below + ": gpuprep cannot tell whether " + d + " runs it";
  }
  return v;
}

void CheckCudaAgainstGpus(const manifest::Compat& compat, const probe::HostFacts& host, const Version& cuda,
                          const std::string& what, const std::string& fix, LayerReport& report) {
  for (const manifest::GpuModel* m : HostGpuModels(compat, host)) {
    if (cuda.Prefix(2) < m->min_cuda.Prefix(2)) {
      report.Add(report.name + ".cuda-too-old-for-gpu", Status::kFail,
                 what + " does not support " + m->name + " (compute capability " + m->cc.str() +
                     " needs CUDA " + m->min_cuda.str() + " or later)",
                 fix);
    }
    if (m->max_cuda_major && cuda.major() > static_cast<uint64_t>(*m->max_cuda_major)) {
      report.Add(report.name + ".cuda-too-new-for-gpu", Status::kFail,
                 what + " no longer supports " + m->name + " (compute capability " + m->cc.str() +
                     "; the last CUDA for it is " + std::to_string(*m->max_cuda_major) + ".x)",
                 fix);
    }
  }
}

manifest::HostQuery HostQueryFor(const manifest::Compat& compat, const probe::HostFacts& host) {
  manifest::HostQuery q;
  q.os_id = host.os.id;
  q.os_version_id = host.os.version_id;
  for (const auto& g : host.gpus)
    if (!g.architecture.empty()) q.architectures.push_back(g.architecture);
  q.boards = HostGpuModels(compat, host);
  return q;
}

std::string NewestStackFor(const manifest::Compat& compat, const probe::HostFacts& host) {
  manifest::HostQuery q = HostQueryFor(compat, host);
  q.architectures.clear();  // the known boards decide
  std::optional<manifest::Stack> best;
  for (const std::string& name : manifest::EmbeddedStackNames()) {
    manifest::Stack s = manifest::LoadStack(name, manifest::LoadContext{});
    if (!s.driver.version.known()) continue;
    if (host.os.id.empty() && !s.os.empty()) {  // an unknown OS: any the stack lists
      q.os_id = s.os.front().id;
      q.os_version_id = s.os.front().version_id;
    }
    if (!manifest::SupportsHost(s, q)) continue;
    if (!best || (s.legacy != best->legacy ? !s.legacy
                                           : manifest::RanksAbove(s, *best) || manifest::Succeeds(s, *best)))
      best = std::move(s);
  }
  return best ? best->name : "";
}

}  // namespace gp::verdict
