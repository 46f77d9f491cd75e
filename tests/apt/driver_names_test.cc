// NVIDIA's driver package names by branch: with the branch up to R580, without it from R590 on (the Driver
// Installation Guide's table of Ubuntu 590 package renames), and the version-locking packages' names.
#include "apt/driver_names.h"

#include <catch2/catch.hpp>
#include <set>

using namespace gp;

namespace {
apt::KnownName Has(std::set<std::string> names) {
  return [names](const std::string& n) { return names.count(n) > 0; };
}
}  // namespace

TEST_CASE("the branch token leaves a name as NVIDIA's R590 renames do", "[apt]") {
  // Rows of the guide's rename table: nvidia-dkms-580 -> nvidia-dkms, nvidia-dkms-580-open ->
  // nvidia-dkms-open, libnvidia-compute-580 -> libnvidia-compute, libnvidia-cfg1-580 -> libnvidia-cfg1.
  CHECK(apt::WithoutBranch("nvidia-dkms-595", 595) == "nvidia-dkms");
  CHECK(apt::WithoutBranch("nvidia-dkms-595-open", 595) == "nvidia-dkms-open");
  CHECK(apt::WithoutBranch("libnvidia-compute-595", 595) == "libnvidia-compute");
  CHECK(apt::WithoutBranch("libnvidia-cfg1-595", 595) == "libnvidia-cfg1");
  CHECK(apt::WithoutBranch("nvidia-open-595", 595) == "nvidia-open");
  // Only a whole token that is the branch: not a version, another branch or a part of a word.
  CHECK(apt::WithoutBranch("nvidia-open", 595) == "nvidia-open");
  CHECK(apt::WithoutBranch("nvidia-open-580", 595) == "nvidia-open-580");
  CHECK(apt::WithoutBranch("nvidia-open-5950", 595) == "nvidia-open-5950");
  CHECK(apt::WithoutBranch("595-tools", 595) == "595-tools");
}

TEST_CASE("a stack's driver package names: as written below R590, as the index knows them from R590 on",
          "[apt]") {
  // Below R590 the names stay as the stack writes them, whatever the index holds.
  CHECK(apt::DriverPackageName("nvidia-driver-580-open", 580, Has({"nvidia-driver-open"})) ==
        "nvidia-driver-580-open");
  CHECK(apt::DriverPackageName("nvidia-driver-580-open", 580, Has({})) == "nvidia-driver-580-open");
  // From R590 on: NVIDIA's repository publishes the unsuffixed name ...
  CHECK(apt::DriverPackageName("nvidia-open-595", 595, Has({"nvidia-open"})) == "nvidia-open");
  // ... the Ubuntu archive still the suffixed one, which wins where the index has it ...
  CHECK(apt::DriverPackageName("nvidia-driver-595-open", 595,
                               Has({"nvidia-driver-595-open", "nvidia-driver-open"})) ==
        "nvidia-driver-595-open");
  // ... and with nothing known (no index yet), the branch decides: unsuffixed.
  CHECK(apt::DriverPackageName("nvidia-open-595", 595, Has({})) == "nvidia-open");
  CHECK(apt::DriverPackageName("nvidia-open", 595, Has({})) == "nvidia-open");

  manifest::DriverSpec d;
  d.branch = 595;
  d.packages = {{"nvidia-open-595", "", ""}, {"libnvidia-compute-595", "", "595.71.05"}};
  auto named = apt::DriverPackages(d, Has({"libnvidia-compute-595"}));
  REQUIRE(named.size() == 2);
  CHECK(named[0].name == "nvidia-open");
  CHECK(named[1].name == "libnvidia-compute-595");
  CHECK(named[1].upstream == "595.71.05");
  std::vector<std::string> candidates;
  for (const auto& p : apt::DriverPackageCandidates(d)) candidates.push_back(p.name);
  CHECK(candidates == std::vector<std::string>{"nvidia-open-595", "libnvidia-compute-595", "nvidia-open",
                                               "libnvidia-compute"});
  d.branch = 580;
  d.packages = {{"nvidia-driver-580-open", "", ""}};
  CHECK(apt::DriverPackageCandidates(d).size() == 1);
}

TEST_CASE("NVIDIA's version-locking packages and the branch each locks", "[apt]") {
  CHECK(apt::LockingPackage(595) == "nvidia-driver-pinning-595");
  CHECK(apt::LockedBranch("nvidia-driver-pinning-595") == std::optional<int>(595));
  CHECK(apt::LockedBranch("nvidia-driver-pinning-580") == std::optional<int>(580));
  // The package that locks one release.
  CHECK(apt::LockedBranch("nvidia-driver-pinning-595.71.05") == std::optional<int>(595));
  CHECK_FALSE(apt::LockedBranch("nvidia-driver-pinning"));
  CHECK_FALSE(apt::LockedBranch("nvidia-driver-pinning-"));
  CHECK_FALSE(apt::LockedBranch("nvidia-driver-pinning-595-open"));
  CHECK_FALSE(apt::LockedBranch("nvidia-driver-595"));
  CHECK_FALSE(apt::LockedBranch("nvidia-driver-pinning-1234567"));
}
