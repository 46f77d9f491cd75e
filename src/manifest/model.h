// The manifest model: plain values, no YAML types. manifest/loader.cc builds them from
// manifests/*.yaml (embedded) or a user's file and validates them; everything else reads only these.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/version.h"

namespace gp::manifest {

// Where a value came from, shown by `manifest show` and `doctor --verbose` (docs/cli.md, "Where values come
// from"): "default", "manifests/stacks/ubuntu22.04-r535-cuda12.2.yaml:14:5" (embedded), "site.yaml:3:7" (a
// user file, path as given), "https://host/s.yaml:3:7", "flag --manifest", "host probe". The loader records
// the file:line:col form.
using Origins = std::map<std::string, std::string>;  // field path ("driver.version") -> origin

// A version that the facts may not give. unknown==true: doctor reports the layer `skip` with `reason`,
// apply refuses it.
struct Pinned {
  std::optional<Version> version;
  bool unknown = false;
  std::string reason;  // why unknown (or the source note, when known)
  bool known() const { return version.has_value() && !unknown; }
};

// ---------------------------------------------------------------- compat facts (manifests/compat.yaml)
struct CudaDriverRow {
  Version cuda;            // "12.2.2"
  Version min_driver;      // "535.104.05" (Linux x86_64, Table 3)
  bool secondary = false;  // only third-party copies of NVIDIA's notes give this row (CUDA 13.3)
};

// From CUDA 13.4 NVIDIA gives a driver branch per CUDA minor instead of a row per release (compat.yaml
// cuda_driver_branches). `ga`: for a minor numbered that way, the release number of its GA (13.4.1): the
// third digit is a build number, below it is the developer preview, above it the updates (13.4.2 = Update 1).
struct CudaBranchRow {
  Version cuda;               // "13.4" (major.minor)
  int branch = 0;             // 615
  std::optional<Version> ga;  // "13.4.1"; nullopt: Update N is patch N (12.2.2 = 12.2 Update 2)
};

// A data-center driver branch's designation and end of life (compat.yaml driver_branches).
struct DriverBranchInfo {
  int branch = 0;
  std::string designation;  // "long-term-support" | "production" | "new-feature"
  std::string end_of_life;  // "2028-06" ("" = not stated)
};

struct MinorCompat {                 // CUDA minor-version compatibility per major (Table 2)
  int cuda_major = 0;                // 12
  int min_branch = 0;                // 525
  std::optional<Version> exact_min;  // 525.60.13
};

// A flavour or ceiling rule (compat.yaml driver_rules) for an architecture or one PCI device id.
struct DriverRule {
  std::string arch;                    // "volta" (empty for a board rule)
  std::string board;                   // "0x2342" (empty for an architecture rule)
  std::string modules;                 // "open" | "proprietary" | "" (either)
  std::optional<int> last_branch;      // 580
  std::optional<int> last_cuda_major;  // 12
};

// Whether one driver release supports a board, per the catalogue's per-release data (GpuModel::support).
struct BoardSupport {
  enum class State {
    kUnknown,  // no data for the driver's branch (older or newer than the data, or no official release in it)
    kListed,   // at or after the first official release of its branch that lists the board
    kNotYet,   // the branch lists it from `first`, a later release
    kNotInBranch,  // no official release of the branch lists it
  };
  State state = State::kUnknown;
  std::optional<Version> first;  // kListed / kNotYet: the first official release of the branch that lists it
};

struct GpuModel {
  std::string name;                     // "H100 80GB HBM3" (the product name of NVIDIA's driver README)
  std::vector<std::string> pci_ids;     // lower-case "0x2330"
  std::vector<std::string> subsystems;  // boards it names, "10de:16c0" (subsystem vendor:device); empty = any
  std::string arch;                     // maxwell, pascal, volta, turing, ampere, ada, hopper, blackwell
  Version cc;                           // compute capability "9.0"
  bool datacenter = false;
  Version min_cuda;           // first CUDA supporting the CC
  int min_driver_branch = 0;  // floor from min_cuda's first driver (e.g. 570 for B200); 0 = not stated
  // Per driver branch: the first production, new-feature or data-center release whose support list names the
  // board (nullopt: no official release of that branch does). Branches absent: no data.
  std::map<int, std::optional<Version>> support;
  // From compat.yaml driver_rules (the architecture's rule, then the board's):
  std::optional<int> last_driver_branch;  // 580 for V100
  std::optional<int> max_cuda_major;      // 12 for V100
  bool open_modules = true;               // false: only the proprietary modules drive it (Volta and older)
  bool requires_open = false;             // true: only the open kernel modules drive it (Blackwell, GH200)
  // How the board is built into servers and what memory a job can use (tools/data/gpu-boards.tsv); a board
  // without a sourced memory size has memory_mib 0 and the fields below empty.
  std::string board;        // the board model `gpuprep size` recommends ("H100 SXM5 80GB")
  uint64_t memory_mib = 0;  // usable memory, MiB as nvidia-smi reports it; 0 = unknown
  std::string memory_kind;  // nvidia-smi (measured) | rounded | marketed (approximate) | system (unified)
  std::string form;         // sxm | pcie | superchip | desktop | unknown
  std::vector<int> server_sizes;  // GPUs per server on offer, ascending (4, 8)
  int nvlink_domain = 0;          // GPUs one NVLink/NVSwitch domain joins; 0 = none assumed
  std::string p2p;                // yes | no | unknown
  std::string memory_source, link_source;
  int nvlink_links = 0;             // NVLink links per GPU; 0 = no source states them (not judged)
  std::string nvlink_links_source;  // where that count is stated ("" with 0)

  // What the per-release data says about driver `driver` for this board.
  BoardSupport SupportAt(const Version& driver) const;
  // "R535 from 535.161.07, R550 from 550.54.14, ..." (every branch that lists it); "" when none does.
  std::string SupportingBranches() const;
  // The first official release that lists it, over all branches; nullopt when none does.
  std::optional<Version> FirstListed() const;
  // Whether a stack's driver (version, flavour open or not, CUDA major) can run this board; "" when it can,
  // else why not (one sentence, naming the source's limit).
  std::string StackCannotRun(const Version& driver, bool open, std::optional<int> cuda_major) const;
};

// The GPU code one library build carries (compat.yaml library_builds): cubins per compute capability (a cubin
// for X.y runs on X.z, z >= y), PTX the driver compiles for that capability and later ones, or, for a library
// that states only a floor, `min_cc`.
struct LibraryBuild {
  std::string library;  // "nccl" | "cudnn"
  Version version;      // "2.30.7": matches a pin it begins (9.10.2 matches 9.10.2.21)
  Version cuda;         // the CUDA it is built for: "12.9" (NCCL: a CUDA minor) or "12" (cuDNN: a major)
  std::vector<Version> sass, ptx;
  std::optional<Version> min_cc;
  std::string source;

  bool Runs(const Version& cc) const;
  // "cubins for 6.0, 6.1 and PTX for 12.0" / "compute capability 5.0 and later".
  std::string Carries() const;
};

struct ToolkitAdvisory {
  std::vector<std::string> cves;  // CVE-2024-0132, ...
  Version fixed_in;               // a toolkit below this version is affected
};

struct ImageFacts {  // what is known about an NGC image tag
  std::string ref;   // "nvcr.io/nvidia/pytorch:23.08-py3"
  Pinned cuda, cudnn, nccl;
  std::optional<int> driver_min_branch;  // "requires NVIDIA Driver release 535 or later"
  std::vector<Version> forward_compat;   // data-center drivers usable in forward-compat mode
  std::string source;
};

// Catalogue rows decoded on demand (EmbeddedHostCompat): the rows of one lower-case device id ("0x2330"), in
// catalogue order, each decoded once and kept for the life of the source.
class GpuRowSource {
 public:
  virtual ~GpuRowSource() = default;
  virtual std::vector<const GpuModel*> RowsOf(const std::string& device_id) const = 0;
};

struct Compat {
  std::vector<CudaDriverRow> cuda_min_driver;       // every row of NVIDIA's table, newest first
  std::vector<CudaBranchRow> cuda_driver_branches;  // CUDA minor -> driver branch, newest first
  std::vector<DriverBranchInfo> driver_branches;
  std::vector<MinorCompat> minor_compat;
  std::vector<DriverRule> driver_rules;
  std::vector<GpuModel> gpus;  // driver_rules already applied
  // Set: `gpus` is empty, and the look-ups by PCI id decode the rows they need from here.
  std::shared_ptr<const GpuRowSource> gpu_rows;
  std::vector<std::string> nvswitch_pci_ids;  // lower-case "0x1af1"
  std::vector<ToolkitAdvisory> toolkit_advisories;
  std::vector<ImageFacts> images;
  std::vector<LibraryBuild> library_builds;

  // The minimum driver of the exact CUDA release (12.2 -> the 12.2 GA row, 12.2.2 -> 12.2 Update 2).
  std::optional<Version> MinDriverFor(const Version& cuda) const;
  // The driver branch NVIDIA gives for the CUDA release's minor (13.4.2 -> R615); nullptr when none.
  const CudaBranchRow* DriverBranchFor(const Version& cuda) const;
  // "13.4 GA", "13.4 Update 1", "13.4 developer preview" (build-numbered minors), "12.2 Update 2", "12.2 GA".
  std::string CudaReleaseName(const Version& cuda) const;
  // True for a release below its minor's GA (13.4.0, the developer preview).
  bool IsCudaPreview(const Version& cuda) const;
  const DriverBranchInfo* BranchInfo(int branch) const;  // nullptr when compat.yaml does not list it
  bool IsLongTermSupport(int branch) const;
  const MinorCompat* MinorCompatFor(int cuda_major) const;
  // The entry for a board: device id "0x2330" (any case, "0x" optional) and its PCI subsystem
  // ("0x10de", "0x16c0" as sysfs writes them; "" when unknown). An entry that lists the subsystem wins over
  // one for any board of the device id; an unknown subsystem matches only the latter.
  const GpuModel* GpuByPci(const std::string& device_id, const std::string& subsystem_vendor_id,
                           const std::string& subsystem_device_id) const;
  const GpuModel* GpuByPciId(const std::string& device_id) const;  // any board: GpuByPci(id, "", "")
  bool IsNvSwitch(const std::string& device_id) const;
  const ImageFacts* ImageByRef(const std::string& ref) const;
  // The row for a library pin built for `cuda` (NCCL: the CUDA minor, cuDNN: the major); nullptr when none.
  const LibraryBuild* LibraryBuildFor(const std::string& library, const Version& version,
                                      const Version& cuda) const;
};

// ---------------------------------------------------------------- stacks (manifests/stacks/*.yaml)
struct OsTarget {
  std::string id;          // ubuntu, debian
  std::string version_id;  // "22.04", "12"
};

struct AptPackage {
  std::string name;      // "libcudnn8"
  std::string version;   // "8.9.7.29-1+cuda12.2": an exact dpkg version (a site file's choice; wins).
  std::string upstream;  // "580.95.05": the upstream part the dpkg version must have. "" with no `version`:
                         // the layer's own version (driver.version, cuda.version...). The revision is
                         // resolved from the repository's index at apply time (apt/resolve.h).
  // Neither `version` nor `upstream`: what it is pinned at is the layer's to say (the layer's own version),
  // or, for the distribution's packages (docker.io, libibumad3), installed by name and never pinned.
  bool NoVersion() const { return version.empty() && upstream.empty(); }
};

// HGX Blackwell's fabric packages among driver.fabricmanager_packages: NVIDIA's NVLink Subnet Manager (nvlsm)
// and the distribution's InfiniBand umad library it reaches the switches with (libibumad3). Each is versioned
// on its own, not at the driver's version (without version or upstream: the distribution's package by name,
// never pinned), and is needed on HGX Blackwell baseboards only.
inline bool FabricPackage(const AptPackage& p) { return p.name == "nvlsm" || p.name == "libibumad3"; }

struct AptRepository {
  std::string name;         // "cuda", "nvidia-container-toolkit"
  std::string url;          // "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/"
  std::string suite = "/";  // flat repositories use "/"
  std::vector<std::string> components;  // empty for flat repositories
  std::string keyring_url;              // where the key comes from
  std::string keyring_path;             // "/usr/share/keyrings/cuda-archive-keyring.gpg" (signed-by)
  std::string key_fingerprint;          // "EB693B3035CD5710E231E123A4B469963BF863CC" (either this or sha256)
  std::string keyring_sha256;
  std::string list_path;  // "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"
  OsTarget os;            // the one OS this repository is for (CUDA repos are per distro); id "" = every OS
};

struct DriverSpec {
  int branch = 0;                                  // 535, 580
  Pinned version;                                  // exact upstream version, e.g. 535.129.03
  std::string flavour = "proprietary";             // proprietary | open | server | server-open
  bool signed_modules = false;                     // prebuilt signed modules: Secure Boot needs no MOK
  std::vector<AptPackage> packages;                // e.g. cuda-drivers-535=535.129.03-1
  std::vector<AptPackage> fabricmanager_packages;  // installed only on NVSwitch hosts
  std::string end_of_life;  // "2026-06": the branch's end-of-life month ("" = not stated)
};

// `source: redist`: NVIDIA's redistributable archives instead of apt packages (cuda, cudnn). The base is
// NVIDIA's (https://developer.download.nvidia.com/compute/cudnn/redist/), a mirror's https URL (plain http
// only from loopback, with json_sha256), or an absolute directory on an air-gapped host.
struct RedistSpec {
  std::string release;                  // redistrib_<release>.json: "9.12.0"
  std::vector<std::string> components;  // ["cudnn"]; CUDA: ["cuda_cudart", "cuda_nvcc", ...]
  std::string base;                     // URL ending in "/" or an absolute directory
  std::string json_sha256;              // optional pin of the redistrib JSON (64 lower-case hex)
};

struct ComponentSpec {    // cuda, cudnn, nccl, container_toolkit
  bool enabled = true;    // false: layer not part of this stack (doctor: skip)
  bool optional = false;  // cuda: hosts that only run containers may skip it
  Pinned version;
  std::optional<int> cuda_major;  // cuDNN/NCCL: which CUDA major they are built for
  std::vector<AptPackage> packages;
  std::string source = "apt";  // "apt" | "redist" (cuda, cudnn)
  RedistSpec redist;           // source == "redist"
};

struct ImageSpec {
  std::string ref;  // "nvcr.io/nvidia/pytorch:23.10-py3"
  Pinned cuda;      // CUDA inside the image
  std::optional<int> driver_min_branch;
  std::vector<Version> forward_compat;  // data-center branches the image's notes allow
  std::string digest;                   // optional pinned sha256:...
  std::string mirror;                   // optional registry mirror "HOST[:PORT][/PREFIX]" (needs digest)
};

// docker: (optional) the engine and how containers reach the GPUs (manifest/docker_spec.cc).
struct DockerSpec {
  bool present = false;                // the stack has a docker section: apply sets Docker up
  std::string engine = "docker.io";    // docker.io (the distribution's) | docker-ce (Docker's repository)
  std::vector<AptPackage> packages;    // the engine's packages; default: {engine}
  std::string gpu_access = "runtime";  // runtime: the nvidia runtime (--gpus) | cdi: Docker's CDI (--device)
  bool default_runtime = false;        // "default-runtime": "nvidia" in daemon.json
  std::string toolkit_mode;  // nvidia-container-runtime.mode: "" (the toolkit's default) | legacy | jit-cdi
};

// `workload.task: FILE`: a kind: Task document (gpuprep size's settings) beside the stack that names it,
// read when the stack is loaded (its settings are read by their owner: layers/task.h).
struct WorkloadTask {
  std::string written;  // the value as written ("tasks/70b-lora.yaml")
  std::string path;     // resolved beside the document that names it, as errors name it ("site/tasks/...")
  std::string text;  // the file's content (at most kMaxManifestBytes); origins["workload.task"]: where named
};

struct Workload {
  std::string profile = "general";  // llm-finetune, vision, recommender, multimodal, general
  int min_cpus_per_gpu = 0;
  unsigned long long min_ram_per_gpu = 0;  // bytes
  unsigned long long min_shm_per_gpu = 0;  // bytes
  std::optional<WorkloadTask> task;        // the training task the host is judged against, when named
  // How many nodes the stack's jobs span (`workload.nodes`, 1..kMaxWorkloadNodes): above 1, doctor judges
  // the network layer as `doctor --nodes N` does.
  int nodes = 1;
};
inline constexpr int kMaxWorkloadNodes = 100000;

// A board of a claimed architecture that the stack does not claim (`boards_excluded:`), with why.
struct ExcludedBoard {
  std::string pci_id;     // "0x2335"
  std::string subsystem;  // "10de:220b"; "" = every board of the device id
  std::string why;
  bool Matches(const GpuModel& g) const;  // g is this device id and (any subsystem, or g names it)
};

struct Stack {
  std::string name;
  std::string description;
  std::string source;                      // "embedded:NAME" or the path/URL the user gave
  std::vector<std::string> extends_chain;  // names/paths this stack was built from, base first
  std::vector<std::string> documents;      // the text of each document it was read from, as read: its own
                                           // first, then the one it extends, and so on (DocumentsSha256)
  bool legacy = false;                     // kept for existing hosts: never chosen by default
  std::vector<OsTarget> os;
  std::vector<std::string> architectures;      // GPU architectures this stack supports
  std::vector<ExcludedBoard> boards_excluded;  // boards of those architectures it does not claim
  // Boards it claims although the per-release data does not list them at its driver (the README lags real
  // support, e.g. the T4 before R575), each with why; doctor still warns on them.
  std::vector<ExcludedBoard> boards_noted;
  std::vector<AptRepository> repositories;
  DriverSpec driver;
  ComponentSpec cuda, cudnn, nccl, container_toolkit;
  ImageSpec image;
  DockerSpec docker;
  Workload workload;
  std::string notes;
  Origins origins;

  bool SupportsOs(const std::string& id, const std::string& version_id) const;
  // Whether the stack claims the board: its architecture is listed and no boards_excluded entry matches.
  bool Claims(const GpuModel& g) const;
  // The repositories that apply on that OS: those for every OS plus those whose `os` matches, in file order.
  std::vector<const AptRepository*> RepositoriesFor(const std::string& id,
                                                    const std::string& version_id) const;
};

}  // namespace gp::manifest
