// NVIDIA's driver package names by branch. NVIDIA's CUDA repository names the driver packages with their
// branch up to R580 (nvidia-dkms-580-open) and without it from R590 on (nvidia-dkms-open), where apt then
// installs the newest driver unless a version-locking package (nvidia-driver-pinning-<branch>) says
// otherwise (NVIDIA's Driver Installation Guide: "Recent updates", "Ubuntu 590 and later packages",
// https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/recent-updates.html, and "Version
// locking", https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/version-locking.html).
// Pure.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"

namespace gp::apt {

// The first branch whose packages NVIDIA's repository publishes without the branch in their names.
constexpr int kFirstUnbranchedBranch = 590;

// `name` without its "-<branch>" token: ("nvidia-dkms-595-open", 595) -> "nvidia-dkms-open",
// ("libnvidia-compute-595", 595) -> "libnvidia-compute"; `name` itself when no token is the branch.
std::string WithoutBranch(const std::string& name, int branch);

// Whether a package name is known where the names are looked up (the repository's index, the dpkg database).
using KnownName = std::function<bool(const std::string&)>;

// The name a stack's driver package has where `has` looks: below R590 the stack's name as written; from
// R590 on the stack's name where `has` knows it (a branch-suffixed package, as the Ubuntu archive still
// publishes them), else the name without the branch (as NVIDIA's repository publishes them).
std::string DriverPackageName(const std::string& name, int branch, const KnownName& has);

// The stack's driver packages with DriverPackageName's names.
std::vector<manifest::AptPackage> DriverPackages(const manifest::DriverSpec& d, const KnownName& has);

// Every name a stack's driver package may be installed under (both schemes from R590 on) and NVIDIA's
// version-locking package of the branch: what the checks of an installed host look for.
std::vector<manifest::AptPackage> DriverPackageCandidates(const manifest::DriverSpec& d);

// NVIDIA's version-locking package of a branch: "nvidia-driver-pinning-595".
std::string LockingPackage(int branch);

// The branch a version-locking package locks: "nvidia-driver-pinning-595" and (the package that locks one
// release) "nvidia-driver-pinning-595.71.05" -> 595; nullopt for any other name.
std::optional<int> LockedBranch(const std::string& name);

}  // namespace gp::apt
