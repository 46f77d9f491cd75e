#include "util/version.h"

#include <catch2/catch.hpp>

using gp::CompareDebVersions;
using gp::Version;

TEST_CASE("dotted versions compare numerically, missing parts are zero") {
  CHECK(Version::Must("535.161.08") > Version::Must("535.104.05"));
  CHECK(Version::Must("515.76") < Version::Must("515.76.1"));
  CHECK(Version::Must("12.2") == Version::Must("12.2.0"));
  CHECK(Version::Must("535.161.08").str() == "535.161.08");
  CHECK(Version::Must("13.0.88").Prefix(2).str() == "13.0");
  CHECK_FALSE(Version::Parse(""));
  CHECK_FALSE(Version::Parse("12.x"));
  CHECK_FALSE(Version::Parse("1..2"));
  CHECK_FALSE(Version::Parse("v12"));
}

TEST_CASE("dpkg ordering: epoch, upstream, revision and tilde") {
  CHECK(CompareDebVersions("1.0", "1.0") == 0);
  CHECK(CompareDebVersions("1:1.0", "2.0") > 0);
  CHECK(CompareDebVersions("1.0~rc1", "1.0") < 0);
  CHECK(CompareDebVersions("1.0-1", "1.0-2") < 0);
  CHECK(CompareDebVersions("535.129.03-0ubuntu1", "535.129.03-1") < 0);  // as dpkg --compare-versions says
  CHECK(CompareDebVersions("8.9.7.29-1+cuda12.2", "8.9.7.29-1+cuda11.8") > 0);
  CHECK(CompareDebVersions("1.17.8-1", "1.17.10-1") < 0);
  CHECK(CompareDebVersions("1.0a", "1.0") > 0);
  CHECK(CompareDebVersions("1.0~~", "1.0~") < 0);
}

TEST_CASE("an epoch with nothing after it still orders by the epoch, as dpkg's own tests say", "[util]") {
  // dpkg's lib/dpkg/t/t-version.c: versions {epoch 1} and {epoch 2}, both blank otherwise, are not equal.
  // libapt-pkg's debVersioningSystem orders "1:" before "2:" too.
  CHECK(CompareDebVersions("1:", "2:") < 0);
  CHECK(CompareDebVersions("2:", "1:") > 0);
  CHECK(CompareDebVersions("1:", "1:") == 0);
  CHECK(gp::DebVersion::Parse("1:").epoch == 1);
  CHECK(gp::DebVersion::Problem("1:") == "nothing after colon in version number");
}

TEST_CASE("NVIDIA version codes") {
  CHECK(gp::CudnnVersionFromCode(8907) == "8.9.7");
  CHECK(gp::CudnnVersionFromCode(90600) == "9.6.0");
  CHECK(gp::CudnnVersionFromCode(91900) == "9.19.0");
  CHECK(gp::NcclVersionFromCode(21803) == "2.18.3");
  CHECK(gp::NcclVersionFromCode(2708) == "2.7.8");
  CHECK(gp::NcclVersionFromCode(22809) == "2.28.9");
  CHECK(gp::CudaVersionFromCode(12020) == "12.2");
  CHECK(gp::CudaVersionFromCode(13000) == "13.0");
}

TEST_CASE("dpkg reads the epoch like strtol and refuses what dpkg --compare-versions refuses", "[util]") {
  CHECK(gp::DebVersion::Parse("+1:1.0").epoch == 1);  // a sign is part of strtol's syntax
  CHECK(CompareDebVersions("+1:1.0", "1:1.0") == 0);
  CHECK(CompareDebVersions("+1:1.0", "2.0") > 0);
  CHECK(CompareDebVersions("-0:1.0", "1.0") == 0);
  CHECK(gp::DebVersion::Parse(" 1:2.0-3 ").upstream == "2.0");
  CHECK(gp::DebVersion::Problem("+1:1.0").empty());
  CHECK(gp::DebVersion::Problem("-0:1.0").empty());
  CHECK(gp::DebVersion::Problem("a1.0").empty());  // only a warning for dpkg
  const std::pair<const char*, const char*> refused[] = {
      {"-1:1.0", "epoch in version is negative"},
      {"2147483648:1", "epoch in version is too big"},
      {"a:1", "epoch in version is empty"},
      {"1a:1", "epoch in version is not number"},
      {"1:", "nothing after colon in version number"},
      {"1.0-", "revision number is empty"},
      {"-1", "version number is empty"},
      {"1 2", "version string has embedded spaces"},
      {" ", "version string is empty"},
  };
  for (const auto& [text, why] : refused) CHECK(gp::DebVersion::Problem(text) == why);
}
