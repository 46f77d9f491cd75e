#include "apt/driver_names.h"

#include <cctype>

#include "util/strings.h"

namespace gp::apt {
namespace {
constexpr std::string_view kLockingPrefix = "nvidia-driver-pinning-";
}  // namespace

std::string WithoutBranch(const std::string& name, int branch) {
  const std::string token = std::to_string(branch);
  std::vector<std::string> parts = Split(name, '-');
  for (size_t i = 1; i < parts.size(); ++i)  // the first part is never the branch
    if (parts[i] == token) {
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(i));
      return Join(parts, "-");
    }
  return name;
}

std::string DriverPackageName(const std::string& name, int branch, const KnownName& has) {
  if (branch < kFirstUnbranchedBranch || has(name)) return name;
  return WithoutBranch(name, branch);
}

std::vector<manifest::AptPackage> DriverPackages(const manifest::DriverSpec& d, const KnownName& has) {
  std::vector<manifest::AptPackage> out = d.packages;
  for (auto& p : out) p.name = DriverPackageName(p.name, d.branch, has);
  return out;
}

std::vector<manifest::AptPackage> DriverPackageCandidates(const manifest::DriverSpec& d) {
  std::vector<manifest::AptPackage> out = d.packages;
  if (d.branch < kFirstUnbranchedBranch) return out;
  for (const auto& p : d.packages) {
    manifest::AptPackage other = p;
    other.name = WithoutBranch(p.name, d.branch);
    if (other.name != p.name) out.push_back(other);
  }
  return out;
}

std::string LockingPackage(int branch) { return std::string(kLockingPrefix) + std::to_string(branch); }

std::optional<int> LockedBranch(const std::string& name) {
  if (!StartsWith(name, kLockingPrefix)) return std::nullopt;
  const std::string rest = name.substr(kLockingPrefix.size());
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0 || digits > 6 || (digits < rest.size() && rest[digits] != '.')) return std::nullopt;
  return std::stoi(rest.substr(0, digits));
}

}  // namespace gp::apt
