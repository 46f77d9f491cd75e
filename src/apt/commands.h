// The exact apt/dpkg command lines gpuprep runs. One place, tested word for word.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace gp::apt {

struct AptOptions {
  int lock_timeout_s = 600;        // -o DPkg::Lock::Timeout=N: a held lock is waited for, not failed on
  bool status_fd = false;          // -o APT::Status-Fd=3 (progress lines; only on a terminal)
  bool allow_change_held = false;  // --allow-change-held-packages (a held package moves to a new pin)
};

inline constexpr int kStatusFd = 3;

// {"DEBIAN_FRONTEND": "noninteractive"}: no debconf prompt can stall an unattended first boot.
std::map<std::string, std::string> AptEnv();

// Package arguments always follow "--" (apt-get and apt-mark stop reading options there), and each must be
// a package word (util/input.h ValidPackageWord: NAME or NAME=VERSION; an install also takes the
// NAME=UPSTREAM-* form an offline plan shows): anything else throws std::invalid_argument, because every
// name and version was validated where it entered (manifest, site file, Packages index, dpkg status).

// apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
//   -o DPkg::Lock::Timeout=N [-o APT::Status-Fd=3] [--allow-change-held-packages] install -- PKG...
std::vector<std::string> InstallArgv(const std::vector<std::string>& packages, const AptOptions& opts);
// apt-get -o DPkg::Lock::Timeout=N -o Acquire::GzipIndexes=false update
std::vector<std::string> UpdateArgv(const AptOptions& opts);
// apt-mark hold -- PKG...
std::vector<std::string> HoldArgv(const std::vector<std::string>& packages);
// apt-mark unhold -- PKG...
std::vector<std::string> UnholdArgv(const std::vector<std::string>& packages);
// dpkg --configure -a
std::vector<std::string> DpkgRepairArgv();

// One APT::Status-Fd line ("pmstatus:libcudnn8:42.8571:Unpacking libcudnn8") as "42% Unpacking libcudnn8";
// "" for lines that are not progress.
std::string ProgressText(const std::string& status_line);

}  // namespace gp::apt
