// Rules shared by several layer checks (driver, cuda, image) and by what consults their verdicts (verify,
// launch's driver check): found versions, the driver-vs-CUDA verdict and the "apply this layer" fix.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/loader.h"
#include "manifest/model.h"
#include "probe/host.h"
#include "verdict/report.h"

namespace gp::verdict {

// The fix that installs or repairs one layer the way the stack says:
// "sudo gpuprep apply --yes --only LAYER" (apply needs root and --yes to change the host).
std::string ApplyFix(const std::string& layer);

// The oldest Docker Engine that gives containers GPUs the way a stack asks (`docker.gpu_access`): `--gpus`
// exists "starting with Docker 19.03"
// (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html); CDI
// devices need Docker 25 ("For CDI support, Docker 25 or later is required",
// https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/release-notes.html). The one rule
// doctor, plan and verify judge an engine by.
struct DockerFloor {
  const char* version;  // "19.03", "25.0"
  const char* wanted;   // ">= 19.03 (--gpus)"
  const char* why;      // "--gpus needs Docker 19.03"
};
DockerFloor DockerGpuFloor(const std::string& gpu_access);
// The engine's version (as its API or dpkg gives it) below the stack's floor: the finding's message
// ("Docker 24.0.7 is older than 25.0 (CDI devices need Docker 25)"); nullopt when it is not below, or does
// not parse.
std::optional<std::string> DockerBelowFloor(const std::string& version, const std::string& gpu_access);

// The manual steps that install the stack's NVIDIA Container Toolkit, as NVIDIA's install guide gives them
// (docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html): NVIDIA's
// repository, the four packages pinned at one version, then the Docker runtime.
std::string ToolkitInstallFix(const manifest::ComponentSpec& spec);

// The driver the host runs: the loaded kernel module's version, else the userspace library's; nullopt
// when neither is found or parses.
std::optional<Version> HostDriverVersion(const probe::HostFacts& host);

// The catalogue entry of one GPU (by device id and board, Compat::GpuByPci); nullptr when unknown.
const manifest::GpuModel* GpuModelOf(const manifest::Compat& compat, const probe::Gpu& gpu);

// The catalogue entry of every known GPU (duplicates removed, in host order).
std::vector<const manifest::GpuModel*> HostGpuModels(const manifest::Compat& compat,
                                                     const probe::HostFacts& host);

// True when the host has GPUs and every one is a known data-center model (forward compatibility applies).
bool AllDatacenter(const manifest::Compat& compat, const probe::HostFacts& host);

// Can `driver` run CUDA `cuda`? (NVIDIA's CUDA Toolkit release notes, Table 3, and minor-version
// compatibility)
//  ok   at or above that CUDA release's own minimum (Compat::MinDriverFor), or, for a CUDA minor NVIDIA gives
//       as a driver branch instead (13.4 -> R615, Compat::DriverBranchFor), on that branch or a later one;
//  warn below it but within the major's minor-version compatibility (branch >= min_branch and, when given,
//       >= exact_min), or when `datacenter` and `forward_compat` names the driver's branch (a listed
//       version V means "V or later of branch V.major");
//  fail otherwise. Newer drivers always run older CUDA.
// `what` names the CUDA in messages ("the stack's CUDA 12.2.2", "image CUDA 12.5.0.23").
struct CudaVerdict {
  Status status = Status::kOk;
  std::string message;
  std::optional<Version> min_driver;  // the release's own minimum, when Compat knows it
  bool minor_compat = false;          // it runs only under the CUDA major's minor-version compatibility
};
CudaVerdict DriverRunsCuda(const manifest::Compat& compat, const Version& driver, const Version& cuda,
                           const std::string& what, bool datacenter,
                           const std::vector<Version>& forward_compat);

// CUDA `cuda` against each known GPU: fails for a GPU whose compute capability needs a newer CUDA
// (GpuModel.min_cuda) or that the CUDA major no longer supports (GpuModel.max_cuda_major). `what` as above;
// `fix` is used for every finding added.
void CheckCudaAgainstGpus(const manifest::Compat& compat, const probe::HostFacts& host, const Version& cuda,
                          const std::string& what, const std::string& fix, LayerReport& report);

// What the default stack choice knows of the host (manifest::HostQuery): its OS, GPU architectures and known
// boards.
manifest::HostQuery HostQueryFor(const manifest::Compat& compat, const probe::HostFacts& host);

// The embedded stack ranked highest (manifest::RanksAbove; legacy ones too, last) that supports the host's OS
// (when known), claims every known GPU of the host and whose pins can run each (GpuModel::StackCannotRun); ""
// when none.
std::string NewestStackFor(const manifest::Compat& compat, const probe::HostFacts& host);

// "13.0.88" -> Version; nullopt for "" or junk.
std::optional<Version> ParseFound(const std::string& text);

}  // namespace gp::verdict
