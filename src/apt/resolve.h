// Exact package versions from a stack's upstream pins, and the set of packages apt would install with
// them, so every one of them can be pinned and held (a meta package that depends on its components at an
// exact version is only installable with those components pinned too).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apt/index.h"

namespace gp::apt {

// What a stack asks for one package.
struct PinRule {
  std::string name;         // "nvidia-open-580"
  std::string exact;        // a full dpkg version from a site file: wins over everything else
  std::string upstream;     // "580.95.05": the upstream part the dpkg version must have
  std::string cuda;         // "13.0": for packages whose revision names the CUDA build ("2.27.7-1+cuda13.0")
  std::string str() const;  // "nvidia-open-580 580.95.05" / "libnccl2 2.27.7 (+cuda13.0)" / "x=1.2-1"
};

// True when `version` satisfies the rule: equal to `exact`, or its upstream part equals `upstream` and
// its revision, where it names a CUDA build, names `cuda`.
bool MatchesPin(const std::string& version, const PinRule& rule);

struct Resolution {
  std::string version;  // the dpkg version to install ("" on error)
  std::string error;    // one line: the package, the version wanted, the nearest versions the index has
  bool ok() const { return error.empty(); }
};

// The highest version of `rule.name` in `index` that matches the rule. A rule without `cuda` whose
// matching versions name several CUDA builds is ambiguous: an error.
Resolution ResolvePin(const Index& index, const PinRule& rule);

// Kernel image, header and module packages (linux-image-*, linux-headers-*, linux-modules-* and their
// meta packages) are never pinned or held: DKMS needs the headers of every new kernel.
bool IsKernelPackage(const std::string& name);

struct Closure {
  std::vector<std::pair<std::string, std::string>> packages;  // (name, version), sorted by name
  std::string error;
  bool ok() const { return error.empty(); }
};

// What apt installs for `roots` (name, exact version) once every package is pinned: the roots and, following
// Depends/Pre-Depends, every package that the repository index provides, at the installed version when it
// satisfies every relation, else the requirer's own release (same upstream version), else for a lower bound
// (">= 13.0.88") the lowest version that satisfies it (the component the requirer was built with), else the
// highest. Relations on packages the index lacks
// (libc6, dkms from the distribution) and kernel packages are left to apt and not followed.
Closure ComputeClosure(const Index& index, const std::map<std::string, std::string>& installed,
                       const std::vector<std::pair<std::string, std::string>>& roots);

}  // namespace gp::apt
