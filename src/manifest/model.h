// The manifest model: plain values, no YAML types. manifest/loader.cc builds them from
// manifests/*.yaml (embedded) or a user's file and validates them; everything else reads only these.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/version.h"

namespace gp::manifest {

// Where a value came from, shown by `manifest show` and `doctor --verbose` (STYLE.md 6):
// "default", "manifests/stacks/ubuntu22.04-r535-cuda12.2.yaml:14:5" (embedded), "site.yaml:3:7" (a user file, path as
// given), "https://host/s.yaml:3:7", "flag --manifest", "host probe". The loader records the file:line:col form.
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
  Version cuda;        // "12.2.2"
  Version min_driver;  // "535.104.05" (Linux x86_64, Table 3)
  bool secondary = false;  // only third-party copies of NVIDIA's notes give this row (CUDA 13.3)
};

struct MinorCompat {         // CUDA minor-version compatibility per major (Table 2)
  int cuda_major = 0;        // 12
  int min_branch = 0;        // 525
  std::optional<Version> exact_min;  // 525.60.13
};

struct GpuModel {
  std::string name;                   // "H100 SXM5 80GB"
  std::vector<std::string> pci_ids;   // lower-case "0x2330"
  std::string arch;                   // ampere, hopper, ada, blackwell, turing, volta
  Version cc;                         // compute capability "9.0"
  bool datacenter = false;
  Version min_cuda;                   // first CUDA supporting the CC
  int min_driver_branch = 0;          // e.g. 570 for B200
  std::optional<int> last_driver_branch;   // 580 for V100
  std::optional<int> max_cuda_major;       // 12 for V100
};

struct ToolkitAdvisory {
  std::vector<std::string> cves;  // CVE-2024-0132, ...
  Version fixed_in;               // a toolkit below this version is affected
};

struct ImageFacts {           // what is known about an NGC image tag
  std::string ref;            // "nvcr.io/nvidia/pytorch:23.08-py3"
  Pinned cuda, cudnn, nccl;
  std::optional<int> driver_min_branch;          // "requires NVIDIA Driver release 535 or later"
  std::vector<Version> forward_compat;           // data-center drivers usable in forward-compat mode
  std::string source;
};

struct Compat {
  std::vector<CudaDriverRow> cuda_min_driver;  // every row of NVIDIA's table, newest first
  std::vector<MinorCompat> minor_compat;
  std::vector<GpuModel> gpus;
  std::vector<std::string> nvswitch_pci_ids;   // lower-case "0x1af1"
  std::vector<ToolkitAdvisory> toolkit_advisories;
  std::vector<ImageFacts> images;

  // The minimum driver of the exact CUDA release (12.2 -> the 12.2 GA row, 12.2.2 -> 12.2 Update 2).
  std::optional<Version> MinDriverFor(const Version& cuda) const;
  const MinorCompat* MinorCompatFor(int cuda_major) const;
  const GpuModel* GpuByPciId(const std::string& device_id) const;  // "0x2330" (any case)
  bool IsNvSwitch(const std::string& device_id) const;
  const ImageFacts* ImageByRef(const std::string& ref) const;
};

// ---------------------------------------------------------------- stacks (manifests/stacks/*.yaml)
struct OsTarget {
  std::string id;          // ubuntu, debian
  std::string version_id;  // "22.04", "12"
};

struct AptPackage {
  std::string name;     // "libcudnn8"
  std::string version;   // "8.9.7.29-1+cuda12.2": an exact dpkg version (a site file's choice; wins).
  std::string upstream;  // "580.95.05": the upstream part the dpkg version must have. "" with no `version`:
                         // the layer's own version (driver.version, cuda.version...). The revision is
                         // resolved from the repository's index at apply time (apt/resolve.h).
};

struct AptRepository {
  std::string name;          // "cuda", "nvidia-container-toolkit"
  std::string url;           // "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/"
  std::string suite = "/";   // flat repositories use "/"
  std::vector<std::string> components;  // empty for flat repositories
  std::string keyring_url;   // where the key comes from
  std::string keyring_path;  // "/usr/share/keyrings/cuda-archive-keyring.gpg" (signed-by)
  std::string key_fingerprint;  // "EB693B3035CD5710E231E123A4B469963BF863CC" (either this or sha256)
  std::string keyring_sha256;
  std::string list_path;     // "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list"
  OsTarget os;               // the one OS this repository is for (CUDA repos are per distro); id "" = every OS
};

struct DriverSpec {
  int branch = 0;                         // 535, 580
  Pinned version;                         // exact upstream version, e.g. 535.129.03
  std::string flavour = "proprietary";    // proprietary | open | server | server-open
  bool signed_modules = false;            // prebuilt signed modules: Secure Boot needs no MOK
  std::vector<AptPackage> packages;       // e.g. cuda-drivers-535=535.129.03-1
  std::vector<AptPackage> fabricmanager_packages;  // installed only on NVSwitch hosts
  std::string end_of_life;                // "2026-06": the branch's end-of-life month ("" = not stated)
};

struct ComponentSpec {                    // cuda, cudnn, nccl, container_toolkit
  bool enabled = true;                    // false: layer not part of this stack (doctor: skip)
  bool optional = false;                  // cuda: hosts that only run containers may skip it
  Pinned version;
  std::optional<int> cuda_major;          // cuDNN/NCCL: which CUDA major they are built for
  std::vector<AptPackage> packages;
};

struct ImageSpec {
  std::string ref;                        // "nvcr.io/nvidia/pytorch:23.10-py3"
  Pinned cuda;                            // CUDA inside the image
  std::optional<int> driver_min_branch;
  std::vector<Version> forward_compat;    // data-center branches the image's notes allow
  std::string digest;                     // optional pinned sha256:...
};

struct Workload {
  std::string profile = "general";        // llm-finetune, vision, recommender, multimodal, general
  int min_cpus_per_gpu = 0;
  unsigned long long min_ram_per_gpu = 0;   // bytes
  unsigned long long min_shm_per_gpu = 0;   // bytes
};

struct Stack {
  std::string name;
  std::string description;
  std::string source;                     // "embedded:NAME" or the path/URL the user gave
  std::vector<std::string> extends_chain; // names/paths this stack was built from, base first
  bool legacy = false;                    // kept for existing hosts: never chosen by default
  std::vector<OsTarget> os;
  std::vector<std::string> architectures; // GPU architectures this stack supports
  std::vector<AptRepository> repositories;
  DriverSpec driver;
  ComponentSpec cuda, cudnn, nccl, container_toolkit;
  ImageSpec image;
  Workload workload;
  std::string notes;
  Origins origins;

  bool SupportsOs(const std::string& id, const std::string& version_id) const;
  // The repositories that apply on that OS: those for every OS plus those whose `os` matches, in file order.
  std::vector<const AptRepository*> RepositoriesFor(const std::string& id, const std::string& version_id) const;
};

}  // namespace gp::manifest
