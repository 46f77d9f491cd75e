// The small pure pieces of apt handling, word for word: dpkg status, sources conflicts, apt's list names,
// key armor and fingerprints, sha256, NVRM lines, apt progress lines.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "apply/harness.h"
#include "apt/commands.h"
#include "apt/dpkg_status.h"
#include "apt/keyring.h"
#include "apt/sources.h"
#include "probe/state.h"
#include "sys/sha256.h"

using namespace gp;

TEST_CASE("dpkg status: versions, holds, half-installed entries; continuation lines are skipped", "[apply]") {
  const std::string text =
      "Package: libcudnn8\nStatus: hold ok installed\nVersion: 8.9.7.29-1+cuda12.2\nDescription: x\n "
      "Version: 0\n\n"
      "Package: libnccl2\nStatus: install ok half-configured\nVersion: 2.18.5-1+cuda12.2\n\n"
      "Package: other\nStatus: install ok installed\nVersion: 1\n\n"
      "Package: cuda-drivers\nStatus: install ok installed\nVersion: 535.129.03-1";
  auto m = apt::ParseDpkgStatus(text, {"libcudnn8", "libnccl2", "cuda-drivers", "absent"});
  REQUIRE(m.size() == 3);
  CHECK(m["libcudnn8"].version == "8.9.7.29-1+cuda12.2");
  CHECK(m["libcudnn8"].held);
  CHECK(m["libcudnn8"].installed);
  CHECK_FALSE(m["libnccl2"].installed);
  CHECK(m["cuda-drivers"].version == "535.129.03-1");
  CHECK_FALSE(m["cuda-drivers"].held);
}

TEST_CASE("sources: conflicting lists for the same URL, in one-line and deb822 form", "[apply]") {
  test::TempRoot root;
  auto repo = test::TestStack().repositories[0];
  root.Write(repo.list_path,
             "deb [signed-by=/other.gpg] https://repo.example/cuda/ /\n");  // ours: rewritten, not moved
  root.Write("/etc/apt/sources.list.d/a.list", "# deb https://repo.example/cuda /\n");
  root.Write("/etc/apt/sources.list.d/b.list",
             "deb [arch=amd64 signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] "
             "https://repo.example/cuda /\n");
  root.Write("/etc/apt/sources.list.d/c.list", "deb https://repo.example/cuda/ /\n");
  root.Write(
      "/etc/apt/sources.list.d/d.sources",
      "Types: deb\nURIs: https://repo.example/cuda\nSuites: /\nSigned-By: /etc/apt/keyrings/old.gpg\n");
  root.Write("/etc/apt/sources.list.d/e.sources",
             "Types: deb\nURIs: https://repo.example/cuda\nSuites: /\nSigned-By:\n -----BEGIN PGP PUBLIC KEY "
             "BLOCK-----\n .\n");
  root.Write("/etc/apt/sources.list.d/f.sources",
             "Types: deb\nURIs: https://repo.example/cuda\nSuites: /\nSigned-By: "
             "/usr/share/keyrings/cuda-archive-keyring.gpg\n");
  root.Write("/etc/apt/sources.list.d/g.list.save", "deb https://repo.example/cuda/ /\n");
  auto conflicts = apt::FindConflicts(root.fs(), repo);
  std::vector<std::string> got;
  for (const auto& c : conflicts) got.push_back(c.path + ": " + c.reason);
  CHECK(got == std::vector<std::string>{
                   "/etc/apt/sources.list.d/c.list: names https://repo.example/cuda/ without signed-by",
                   "/etc/apt/sources.list.d/d.sources: names https://repo.example/cuda/ with Signed-By: "
                   "/etc/apt/keyrings/old.gpg",
                   "/etc/apt/sources.list.d/e.sources: names https://repo.example/cuda/ with an inline "
                   "Signed-By key"});
}

TEST_CASE("apt's list file names for a repository", "[apply]") {
  manifest::AptRepository r;
  r.url = "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/";
  CHECK(apt::ListsPrefix(r) == "developer.download.nvidia.com_compute_cuda_repos_ubuntu2204_x86%5f64_");
  r.url = "https://user:pw@127.0.0.1:8443/repo";
  CHECK(apt::ListsPrefix(r) == "127.0.0.1:8443_repo_");
}

TEST_CASE("keys: armor removed in-process, primary fingerprints only", "[apply]") {
  const std::string armored =
      "-----BEGIN PGP PUBLIC KEY BLOCK-----\nVersion: GnuPG v2\n\nmQINBGJ=\n=PoVs\n-----END PGP PUBLIC KEY "
      "BLOCK-----\n";  // =PoVs: the CRC24
  CHECK(apt::IsArmored(armored));
  auto bin = apt::Dearmor(armored);
  REQUIRE(bin);
  CHECK(*bin == std::string("\x99\x02\x0d\x04\x62", 5));
  CHECK_FALSE(
      apt::Dearmor("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n-----END PGP PUBLIC KEY BLOCK-----\n"));
  CHECK(apt::NormalizeFingerprint("eb69 3B30 35CD 5710 E231  E123 A4B4 6996 3BF8 63CC") ==
        "EB693B3035CD5710E231E123A4B469963BF863CC");
  const std::string colons =
      "pub:-:4096:1:A4B469963BF863CC:1649870220:::-:::scESC::::::23::0:\n"
      "fpr:::::::::EB693B3035CD5710E231E123A4B469963BF863CC:\n"
      "uid:-::::1649870220::X::cudatools <cudatools@nvidia.com>::::::::::0:\n"
      "sub:-:4096:1:1111111111111111:1649870220::::::e::::::23:\n"
      "fpr:::::::::2222222222222222222222222222222222222222:\n";
  CHECK(apt::PrimaryFingerprints(colons) ==
        std::vector<std::string>{"EB693B3035CD5710E231E123A4B469963BF863CC"});
}

TEST_CASE("sha256 through libcrypto", "[apply]") {
  CHECK(sys::Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sys::Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("NVRM lines in both formats; module version from /sys when /proc lacks it", "[apply]") {
  test::TempRoot root;
  CHECK_FALSE(probe::LoadedModuleVersion(root.fs()));
  root.Write("/sys/module/nvidia/version", "535.129.03\n");
  CHECK(probe::LoadedModuleVersion(root.fs()) == std::optional<std::string>("535.129.03"));
  root.Write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  "
             "(dvs-builder@U16-A24-9-2)  Thu Oct 10 12:15:00 UTC 2024\n");
  CHECK(probe::LoadedModuleVersion(root.fs()) == std::optional<std::string>("565.57.01"));
  root.Write("/proc/driver/nvidia/version", "garbage\n");
  CHECK(probe::LoadedModuleVersion(root.fs()) == std::optional<std::string>("535.129.03"));
}

TEST_CASE("apt progress lines become percentages; other lines are ignored", "[apply]") {
  CHECK(apt::ProgressText("pmstatus:libcudnn8:42.8571:Unpacking libcudnn8 (amd64)") ==
        "42% Unpacking libcudnn8 (amd64)");
  CHECK(apt::ProgressText("dlstatus:1:9.5:Retrieving file 1 of 6") == "9% Retrieving file 1 of 6");
  CHECK(apt::ProgressText("pmerror:x:1:boom").empty());
  apt::AptOptions o;
  o.status_fd = true;
  CHECK(apt::InstallArgv({"ab=1"}, o) ==
        std::vector<std::string>{"apt-get", "-y", "-o", "Dpkg::Options::=--force-confdef", "-o",
                                 "Dpkg::Options::=--force-confold", "-o", "DPkg::Lock::Timeout=600", "-o",
                                 "APT::Status-Fd=3", "install", "--", "ab=1"});
}

TEST_CASE("package arguments follow --, and a word that is not a package never reaches apt", "[apply]") {
  apt::AptOptions o;
  CHECK(apt::HoldArgv({"libcudnn8", "libnccl2"}) ==
        std::vector<std::string>{"apt-mark", "hold", "--", "libcudnn8", "libnccl2"});
  CHECK(apt::UnholdArgv({"libcudnn8"}) == std::vector<std::string>{"apt-mark", "unhold", "--", "libcudnn8"});
  CHECK(apt::InstallArgv({"nvidia-container-toolkit=1.19.1-*"}, o).back() ==
        "nvidia-container-toolkit=1.19.1-*");
  for (const char* bad :
       {"--allow-unauthenticated=1", "-oDpkg::Pre-Invoke::=touch${IFS}PWNED", "libfoo=-1", "x"}) {
    CHECK_THROWS_AS(apt::InstallArgv({"libok=1.0", bad}, o), std::invalid_argument);
    CHECK_THROWS_AS(apt::HoldArgv({bad}), std::invalid_argument);
    CHECK_THROWS_AS(apt::UnholdArgv({bad}), std::invalid_argument);
  }
  CHECK_THROWS_AS(apt::HoldArgv({"libfoo=1.0-*"}),
                  std::invalid_argument);  // globs only for an offline install line
}
