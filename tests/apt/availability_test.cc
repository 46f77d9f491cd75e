// apt/availability.h: whether the distribution publishes a kernel package, read from apt's lists.
#include "apt/availability.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "apply/harness.h"

using namespace gp;
using apt::Availability;

namespace {

std::string Stanza(const std::string& name, const std::string& version = "1.0") {
  return "Package: " + name + "\nArchitecture: amd64\nVersion: " + version + "\nFilename: pool/" + name +
         ".deb\nDescription: test\n multi-line\n\n";
}

const char* kLists = "/var/lib/apt/lists";

Availability Find(test::TempRoot& root, const std::string& name) {
  return apt::FindKernelPackage(root.fs(), kLists, name, "the lists").state;
}

}  // namespace

TEST_CASE("a kernel package is found in any Packages file of the lists directory", "[apt][availability]") {
  test::TempRoot root;
  root.Write("/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy_main_binary-amd64_Packages",
             Stanza("bash") + Stanza("linux-headers-5.15.0-25-generic"));
  root.Write("/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy-updates_main_binary-amd64_Packages",
             Stanza("linux-headers-5.15.0-105-generic") + Stanza("zlib1g"));
  root.Write("/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy_InRelease",
             "Package: linux-headers-9\n");
  auto a = apt::FindKernelPackage(root.fs(), kLists, "linux-headers-5.15.0-105-generic", "the lists");
  CHECK(a.state == Availability::kAvailable);
  CHECK(a.from == "the lists");
  CHECK(Find(root, "linux-headers-5.15.0-25-generic") == Availability::kAvailable);
  // A distribution archive was read and does not list it: an old ABI it dropped, or a provider's kernel.
  CHECK(Find(root, "linux-headers-5.15.0-91-generic") == Availability::kMissing);
  CHECK(Find(root, "linux-headers-6.18.44-fc-v657-gpu") == Availability::kMissing);
  // Whole names only: neither a longer name nor a prefix of one.
  CHECK(Find(root, "linux-headers-5.15.0-105") == Availability::kMissing);
  CHECK(Find(root, "headers-5.15.0-105-generic") == Availability::kMissing);
  // Only Packages files count (the InRelease above "names" linux-headers-9).
  CHECK(Find(root, "linux-headers-9") == Availability::kMissing);
}

TEST_CASE("without a distribution archive in the lists the answer is unknown, not missing",
          "[apt][availability]") {
  test::TempRoot root;
  CHECK(Find(root, "linux-headers-5.15.0-105-generic") == Availability::kUnknown);  // no lists directory
  root.Write(
      "/var/lib/apt/lists/developer.download.nvidia.com_compute_cuda_repos_ubuntu2204_x86%5f64_Packages",
      Stanza("cuda-drivers", "580.95.05-1") + Stanza("nvidia-driver-580-open", "580.95.05-0ubuntu1"));
  CHECK(Find(root, "linux-headers-5.15.0-105-generic") == Availability::kUnknown);  // third-party only
  // Compressed lists (Acquire::GzipIndexes, as Docker's Ubuntu images set it) are not read.
  root.Write("/var/lib/apt/lists/archive.ubuntu.com_ubuntu_dists_jammy_main_binary-amd64_Packages.lz4",
             "\x04\"M\x18");
  CHECK(Find(root, "linux-headers-5.15.0-105-generic") == Availability::kUnknown);
}

TEST_CASE("a Packages file that cannot be read makes a missing package unknown", "[apt][availability]") {
  test::TempRoot root;
  root.Write("/var/lib/apt/lists/a_main_binary-amd64_Packages", Stanza("linux-headers-6.8.0-48-generic"));
  const std::string fifo = root.path() + "/var/lib/apt/lists/b_universe_binary-amd64_Packages";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK(Find(root, "linux-headers-6.8.0-48-generic") == Availability::kAvailable);
  CHECK(Find(root, "linux-headers-6.8.0-31-generic") == Availability::kUnknown);  // it may be in b
}

TEST_CASE("a kernel release that is no Debian package name has no headers package", "[apt][availability]") {
  test::TempRoot root;
  CHECK(apt::KernelHeadersPackage("6.8.0-48-generic") == "linux-headers-6.8.0-48-generic");
  for (const char* k : {"6.1.0-Custom", "6.1.0_custom", "6.1 0", "6.1\n", "6.1.0-\x1b[31m"})
    CHECK(Find(root, apt::KernelHeadersPackage(k)) == Availability::kMissing);
}
