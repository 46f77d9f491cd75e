// Version values and their orderings.
//  - Version: dotted numbers as NVIDIA prints them (driver 535.161.08, 515.76; CUDA 12.2.2, 13.0.88;
//    cuDNN 8.9.7.29; NCCL 2.18.3; toolkit 1.17.8). Missing trailing parts compare as 0 (12.2 == 12.2.0).
//  - DebVersion: dpkg's ordering of package versions (epoch:upstream-revision, with '~' before anything).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp {

class Version {
 public:
  Version() = default;
  // Parses "N(.N)*" with 1..6 numeric parts. nullopt for anything else ("", "1..2", "12.x", "v12").
  static std::optional<Version> Parse(std::string_view text);
  // Parses and throws std::invalid_argument with a readable message on failure.
  static Version Must(std::string_view text);

  const std::vector<uint64_t>& parts() const { return parts_; }
  uint64_t major() const { return parts_.empty() ? 0 : parts_[0]; }
  uint64_t minor() const { return parts_.size() > 1 ? parts_[1] : 0; }
  uint64_t patch() const { return parts_.size() > 2 ? parts_[2] : 0; }
  size_t size() const { return parts_.size(); }
  bool empty() const { return parts_.empty(); }
  // The text it was parsed from ("535.161.08" keeps its leading zero).
  const std::string& str() const { return text_; }
  // The first n parts, e.g. Version("12.2.2").Prefix(2) == "12.2".
  Version Prefix(size_t n) const;

  // Numeric comparison, part by part; missing parts are 0.
  friend int Compare(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return Compare(a, b) == 0; }
  friend bool operator!=(const Version& a, const Version& b) { return Compare(a, b) != 0; }
  friend bool operator<(const Version& a, const Version& b) { return Compare(a, b) < 0; }
  friend bool operator<=(const Version& a, const Version& b) { return Compare(a, b) <= 0; }
  friend bool operator>(const Version& a, const Version& b) { return Compare(a, b) > 0; }
  friend bool operator>=(const Version& a, const Version& b) { return Compare(a, b) >= 0; }

 private:
  std::vector<uint64_t> parts_;
  std::string text_;
};

// dpkg version comparison (deb-version(7)): returns <0, 0, >0. Never fails; malformed input is compared
// by the same algorithm dpkg uses (DebVersion::Problem says whether dpkg would refuse it).
int CompareDebVersions(std::string_view a, std::string_view b);

struct DebVersion {
  uint64_t epoch = 0;
  std::string upstream;  // "535.161.08", "8.9.7.29"
  std::string revision;  // "1", "0ubuntu1", "1+cuda12.2"; empty when absent
  // Read as dpkg reads it: blanks around it dropped, the epoch up to the first ':' (strtol's syntax, so
  // "+1:1.0" has epoch 1), the revision after the last '-'. Never fails: what dpkg refuses still gives
  // its parts (epoch 0 when the epoch is bad).
  static DebVersion Parse(std::string_view text);
  // dpkg's reason to refuse `text` ("epoch in version is negative", "version string has embedded spaces"),
  // as `dpkg --compare-versions` reports it; "" when dpkg reads it (perhaps with only a warning).
  static std::string Problem(std::string_view text);
};

// Builds NVIDIA-style code numbers back into versions:
//   cuDNN: 8907 -> 8.9.7 (v8: M*1000+m*100+p), 90600 -> 9.6.0 (v9+: M*10000+m*100+p)
//   NCCL:  21803 -> 2.18.3 (>= 2.9: M*10000+m*100+p), 2708 -> 2.7.8 (<= 2.8: M*1000+m*100+p)
//   CUDA runtime/driver API: 12020 -> 12.2, 13000 -> 13.0 (M*1000 + m*10)
// A release as a program or dpkg gives it ("28.2.2", "20.10.24+dfsg1-1+b3", "5:28.0.1-1~debian.12~bookworm",
// "580.95.05-0ubuntu1") -> the upstream release (28.2.2, 20.10.24, 28.0.1, 580.95.05); nullopt when none.
std::optional<Version> UpstreamRelease(const std::string& text);

std::string CudnnVersionFromCode(long code);
std::string NcclVersionFromCode(long code);
std::string CudaVersionFromCode(long code);

}  // namespace gp
