// The kernels to come: the kernel meta packages dpkg lists, read from status files shaped like a Debian 12
// cloud image's and an Ubuntu 22.04 HWE server's (full stanzas, removed packages left as config-files, a
// record in dpkg's updates/ journal), and the driver layer's verdict on them.
#include <catch2/catch.hpp>
#include <cstdio>

#include "apply/harness.h"
#include "apt/availability.h"
#include "layers/driver/driver.h"
#include "layers/sample.h"
#include "probe/steps.h"

using namespace gp;
using verdict::Status;

namespace {

std::string KernelStanza(const std::string& package, const std::string& status, const std::string& source,
                         const std::string& version, const std::string& depends,
                         const std::string& description) {
  return "Package: " + package + "\nStatus: " + status +
         "\nPriority: optional\nSection: kernel\nInstalled-Size: 13\n"
         "Maintainer: Debian Kernel Team <debian-kernel@lists.debian.org>\nArchitecture: amd64\nSource: " +
         source + "\nVersion: " + version + (depends.empty() ? "" : "\nDepends: " + depends) +
         "\nDescription: " + description +
         "\n This package depends on the latest Linux kernel and modules\n"
         " for use on Amazon EC2 and Microsoft Azure cloud platforms.\n\n";
}

// A Debian 12 cloud image after a kernel update: the cloud meta and two kernels, the older one removed to
// its configuration files; its headers meta was installed, then removed in a dpkg run that was cut off
// (the removal is in updates/, not yet in status).
void DebianCloud(test::TempRoot& root) {
  const std::string ok = "install ok installed";
  root.Write(
      "/var/lib/dpkg/status",
      KernelStanza("linux-image-6.1.0-27-cloud-amd64", "deinstall ok config-files",
                   "linux-signed-amd64 (6.1.115+1)", "6.1.115-1",
                   "kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool",
                   "Linux 6.1 for x86-64 cloud (signed)") +
          KernelStanza("linux-image-6.1.0-28-cloud-amd64", ok, "linux-signed-amd64 (6.1.119+1)", "6.1.119-1",
                       "kmod, linux-base (>= 4.3~), initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool",
                       "Linux 6.1 for x86-64 cloud (signed)") +
          KernelStanza("linux-image-cloud-amd64", ok, "linux-signed-amd64 (6.1.119+1)", "6.1.119-1",
                       "linux-image-6.1.0-28-cloud-amd64 (= 6.1.119-1)",
                       "Linux for x86-64 cloud (meta-package)") +
          KernelStanza("linux-headers-cloud-amd64", ok, "linux-signed-amd64 (6.1.119+1)", "6.1.119-1",
                       "linux-headers-6.1.0-28-cloud-amd64 (= 6.1.119-1)",
                       "Header files for Linux cloud-amd64 configuration (meta-package)") +
          KernelStanza("linux-image-amd64-dbg", ok, "linux (6.1.119-1)", "6.1.119-1",
                       "linux-image-6.1.0-28-amd64-dbg (= 6.1.119-1)", "Debugging symbols for Linux amd64"));
  root.Write("/var/lib/dpkg/updates/0003",
             "Package: linux-headers-cloud-amd64\nStatus: deinstall ok config-files\nPriority: optional\n"
             "Section: kernel\nArchitecture: amd64\nSource: linux-signed-amd64 (6.1.119+1)\n"
             "Version: 6.1.119-1\n\n");
}

probe::HostFacts ProbeMetaTree(test::TempRoot& root) {
  probe::ProbeEnv env;
  env.fs = &root.fs();
  probe::HostFacts facts;
  probe::ProbeDpkg(env, facts);
  return facts;
}

// The driver layer on the healthy sample host (DKMS-built driver) with these kernel packages.
verdict::LayerReport JudgeMetas(const std::vector<std::string>& metas, bool signed_modules = false) {
  test::Inputs t;
  t.host.boot.probed = true;
  t.host.kernel_images = {"5.15.0-105-generic"};
  t.host.kernel_metas = metas;
  t.stack.driver.signed_modules = signed_modules;
  t.host.driver.dkms_module = !signed_modules;
  return layers::CheckDriver(t.in());
}

const verdict::Finding* MetaFinding(const verdict::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("future kernels: each flavour meta maps to its headers meta; release images and others to none",
          "[layers][driver][kernels]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"linux-image-generic-hwe-22.04", "linux-headers-generic-hwe-22.04"},
      {"linux-image-generic", "linux-headers-generic"},
      {"linux-image-aws", "linux-headers-aws"},
      {"linux-image-azure", "linux-headers-azure"},
      {"linux-image-gcp", "linux-headers-gcp"},
      {"linux-image-generic-64k", "linux-headers-generic-64k"},
      {"linux-image-generic-64k-hwe-24.04", "linux-headers-generic-64k-hwe-24.04"},
      {"linux-image-amd64", "linux-headers-amd64"},
      {"linux-image-cloud-amd64", "linux-headers-cloud-amd64"},
      {"linux-image-6.8.0-60-generic", ""},
      {"linux-image-unsigned-6.8.0-60-generic", ""},
      {"linux-image-extra-virtual", ""},
      {"linux-image-extra-virtual-hwe-22.04", ""},
      {"linux-image-amd64-dbg", ""},
      {"linux-image-amd64-signed-template", ""},
      {"linux-headers-generic", ""},
      {"linux-image-", ""},
      {"linux-image-Generic", ""},
      {"linux-image-aws;reboot", ""},
  };
  for (const auto& [image, headers] : cases) {
    INFO(image);
    CHECK(apt::KernelHeadersMeta(image) == headers);
  }
}

TEST_CASE("future kernels: dpkg's kernel metas, its journal's removal included",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  DebianCloud(root);
  const probe::HostFacts facts = ProbeMetaTree(root);
  CHECK(facts.kernel_images == std::vector<std::string>{"6.1.0-28-cloud-amd64"});
  // The headers meta the journal removed is gone; the debug symbols are listed (apt says they are no
  // flavour).
  CHECK(facts.kernel_metas == std::vector<std::string>{"linux-image-cloud-amd64", "linux-image-amd64-dbg"});
  REQUIRE(std::remove((root.path() + "/var/lib/dpkg/updates/0003").c_str()) == 0);
  CHECK(ProbeMetaTree(root).kernel_metas == std::vector<std::string>{"linux-image-cloud-amd64",
                                                                     "linux-headers-cloud-amd64",
                                                                     "linux-image-amd64-dbg"});
}

TEST_CASE("future kernels: a kernel meta without its headers meta is a warning with the package to install",
          "[layers][driver][kernels]") {
  SECTION("the Debian cloud meta alone") {
    test::TempRoot root;
    DebianCloud(root);
    const verdict::LayerReport r = JudgeMetas(ProbeMetaTree(root).kernel_metas);
    const verdict::Finding* f = MetaFinding(r, "driver.kernel-headers-meta");
    REQUIRE(f);
    CHECK(f->status == Status::kWarn);
    CHECK(f->message ==
          "kernel meta package linux-image-cloud-amd64 is installed without linux-headers-cloud-amd64: the "
          "next "
          "kernel it brings comes without headers, so DKMS cannot build the nvidia module for it and that "
          "kernel boots without the GPU driver");
    CHECK(f->fix == std::optional<std::string>(
                        "sudo apt-get install linux-headers-cloud-amd64 (or gpuprep apply --only driver)"));
    CHECK_FALSE(MetaFinding(r, "driver.kernel-meta-none"));
  }
  SECTION("Ubuntu's HWE meta: its own headers meta, not the one of the kernel series uname suggests") {
    const verdict::LayerReport r = JudgeMetas(
        {"linux-image-generic-hwe-22.04", "linux-headers-generic", "linux-headers-6.8.0-60-generic"});
    const verdict::Finding* f = MetaFinding(r, "driver.kernel-headers-meta");
    REQUIRE(f);
    CHECK(f->fix ==
          std::optional<std::string>(
              "sudo apt-get install linux-headers-generic-hwe-22.04 (or gpuprep apply --only driver)"));
  }
  SECTION("every meta with its headers meta: nothing to say") {
    const verdict::LayerReport r = JudgeMetas({"linux-image-aws", "linux-headers-aws"});
    CHECK_FALSE(MetaFinding(r, "driver.kernel-headers-meta"));
    CHECK_FALSE(MetaFinding(r, "driver.kernel-meta-none"));
  }
  SECTION("no kernel meta: no future kernel comes by apt, said as a skip") {
    const verdict::LayerReport r = JudgeMetas({"linux-image-amd64-dbg"});
    const verdict::Finding* f = MetaFinding(r, "driver.kernel-meta-none");
    REQUIRE(f);
    CHECK(f->status == Status::kSkip);
    CHECK_FALSE(MetaFinding(r, "driver.kernel-headers-meta"));
  }
  SECTION("prebuilt signed modules, no DKMS: headers are not the driver's concern") {
    const verdict::LayerReport r = JudgeMetas({"linux-image-generic"}, true);
    CHECK_FALSE(MetaFinding(r, "driver.kernel-headers-meta"));
    CHECK_FALSE(MetaFinding(r, "driver.kernel-meta-none"));
  }
}
