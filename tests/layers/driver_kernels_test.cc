// Every installed kernel and the next boot, probed from trees built here and judged by the driver layer:
// a second kernel without a module, a failed DKMS build, GRUB_DEFAULT=saved with a one-shot next_entry, a
// submenu default ("1>2") and a stray /lib/modules directory.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/driver/driver.h"
#include "layers/sample.h"
#include "probe/boot.h"
#include "probe/steps.h"

using namespace gp;
using verdict::Status;

namespace {

const char* const kKernelOld = "6.8.0-60-generic";
const char* const kKernelNew = "6.8.0-62-generic";
const char* const kDkmsNvidia = "/var/lib/dkms/nvidia/535.129.03";

std::string KernelImage(const std::string& k, const char* status = "install ok installed") {
  return "Package: linux-image-" + k + "\nStatus: " + status + "\nVersion: 6.8.0-60.63\n\n";
}

// A host on kKernelOld with the DKMS-built module; kKernelNew installed by dpkg, with neither headers nor a
// module.
void TwoKernels(test::TempRoot& root) {
  root.Write("/var/lib/dpkg/status", KernelImage(kKernelOld) + KernelImage(kKernelNew) +
                                         "Package: linux-image-generic\nStatus: install ok installed\n"
                                         "Version: 6.8.0.62.62\n\n");
  const std::string old_dir = std::string("/lib/modules/") + kKernelOld;
  root.Write(old_dir + "/modules.dep",
             "kernel/drivers/video/fbdev/core/fb.ko.zst:\nupdates/dkms/nvidia.ko.zst:\n"
             "updates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\n");
  root.Write(old_dir + "/updates/dkms/nvidia.ko.zst", "(a module)");
  root.Write(std::string("/usr/src/linux-headers-") + kKernelOld + "/Makefile", "");
  root.Symlink(std::string("/usr/src/linux-headers-") + kKernelOld, old_dir + "/build");
  root.Write(std::string(kDkmsNvidia) + "/" + kKernelOld + "/x86_64/module/nvidia.ko.zst", "(a module)");
  root.Write(std::string("/lib/modules/") + kKernelNew + "/modules.dep",
             "kernel/drivers/video/fbdev/core/fb.ko.zst:\n");
}

probe::HostFacts ProbeKernelTree(test::TempRoot& root) {
  probe::ProbeEnv env;
  env.fs = &root.fs();
  probe::HostFacts facts;
  probe::ProbeDpkg(env, facts);
  probe::ProbeKernels(env, facts);
  return facts;
}

verdict::LayerReport JudgeKernels(const probe::HostFacts& probed) {
  test::Inputs t;
  t.host.boot = probed.boot;
  return layers::CheckDriver(t.in());
}

const verdict::Finding* KernelFinding(const verdict::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

// grub.cfg as Ubuntu's 10_linux writes it: the newest kernel first, older ones in the submenu.
std::string UbuntuGrubCfg(const std::string& set_default) {
  const std::string u = "0b9f7a2e-0000-4000-8000-000000000001";
  auto entry = [&](const std::string& k, const std::string& extra) {
    return "\tmenuentry 'Ubuntu, with Linux " + k + extra +
           "' --class ubuntu $menuentry_id_option 'gnulinux-" + k +
           (extra.empty() ? "-advanced-" : "-recovery-") + u +
           "' {\n\t\trecordfail\n\t\tlinux\t/boot/vmlinuz-" + k + " root=UUID=" + u +
           " ro\n\t\tinitrd\t/boot/initrd.img-" + k + "\n\t}\n";
  };
  return "if [ -s $prefix/grubenv ]; then\n  load_env\nfi\nif [ \"${next_entry}\" ] ; then\n"
         "   set default=\"${next_entry}\"\n   set next_entry=\n   save_env next_entry\n   set "
         "boot_once=true\n"
         "else\n   set default=\"" +
         set_default +
         "\"\nfi\nfunction load_video {\n  insmod all_video\n}\n"
         "menuentry 'Ubuntu' --class ubuntu $menuentry_id_option 'gnulinux-simple-" +
         u + "' {\n\tlinux\t/boot/vmlinuz-" + kKernelNew + " root=UUID=" + u +
         " ro\n}\nsubmenu 'Advanced options for Ubuntu' $menuentry_id_option 'gnulinux-advanced-" + u +
         "' {\n" + entry(kKernelNew, "") + entry(kKernelNew, " (recovery mode)") + entry(kKernelOld, "") +
         entry(kKernelOld, " (recovery mode)") +
         "}\nmenuentry 'UEFI Firmware Settings' $menuentry_id_option 'uefi-firmware' {\n\tfwsetup\n}\n";
}

}  // namespace

TEST_CASE("kernels: a second kernel without a module is named, with headers and a DKMS build as the fix",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  TwoKernels(root);
  const probe::HostFacts facts = ProbeKernelTree(root);
  REQUIRE(facts.boot.kernels.size() == 2);
  const probe::InstalledKernel& old_k = facts.boot.kernels[0];
  CHECK(old_k.release == kKernelOld);
  CHECK(old_k.headers);
  CHECK(old_k.module_path == "updates/dkms/nvidia.ko.zst");
  CHECK(old_k.module_version == "535.129.03");
  CHECK(old_k.module_branch == 535);
  const probe::InstalledKernel& new_k = facts.boot.kernels[1];
  CHECK(new_k.release == kKernelNew);
  CHECK_FALSE(new_k.headers);
  CHECK(new_k.module_path.empty());
  CHECK(facts.boot.next_kernel.empty());
  CHECK(facts.boot.next_detail == "no /boot/grub/grub.cfg (another boot loader?)");

  const verdict::LayerReport r = JudgeKernels(facts);
  CHECK(r.status == Status::kWarn);
  const verdict::Finding* f = KernelFinding(r, "driver.kernel-no-module");
  REQUIRE(f);
  CHECK(f->message ==
        "installed kernel 6.8.0-62-generic has no nvidia module for this driver (its modules.dep lists no "
        "nvidia "
        "module; no headers for it, so DKMS cannot build one): it would boot without the GPU driver");
  CHECK(f->fix ==
        std::optional<std::string>("sudo apt-get install linux-headers-6.8.0-62-generic && sudo dkms "
                                   "install nvidia/535.129.03 -k 6.8.0-62-generic"));
  const verdict::Finding* unknown = KernelFinding(r, "driver.next-boot-unknown");
  REQUIRE(unknown);
  CHECK(unknown->status == Status::kSkip);
  CHECK(unknown->message == "next boot: unknown (no /boot/grub/grub.cfg (another boot loader?))");
  CHECK_FALSE(KernelFinding(r, "driver.next-boot-no-module"));
}

TEST_CASE("kernels: a failed DKMS build quotes make.log's last error, made safe for the terminal",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  TwoKernels(root);
  const std::string dir = std::string(kDkmsNvidia) + "/" + kKernelNew + "/x86_64/log";
  root.Write(dir + "/make.log",
             "DKMS make.log for nvidia-535.129.03 for kernel 6.8.0-62-generic (x86_64)\n"
             "/var/lib/dkms/nvidia/535.129.03/build/nvidia/nv.c:12:10: error: first\n"
             "/var/lib/dkms/nvidia/535.129.03/build/nvidia/os-interface.c:40:3: error: implicit declaration "
             "of \x1b[31mfunction\x1b[0m 'follow_pfn'\n"
             "make[2]: *** [scripts/Makefile.build:243: nvidia/os-interface.o] Error 1\n");
  const probe::HostFacts facts = ProbeKernelTree(root);
  const probe::InstalledKernel& k = facts.boot.kernels[1];
  CHECK(k.dkms_version == "535.129.03");
  CHECK(k.dkms_log == dir + "/make.log");
  CHECK(k.dkms_error ==
        "/var/lib/dkms/nvidia/535.129.03/build/nvidia/os-interface.c:40:3: error: implicit declaration of "
        "\\e[31mfunction\\e[0m 'follow_pfn'");

  const verdict::LayerReport r = JudgeKernels(facts);
  const verdict::Finding* f = KernelFinding(r, "driver.dkms-build-failed");
  REQUIRE(f);
  CHECK(f->status == Status::kWarn);
  CHECK(f->message == "DKMS failed to build nvidia 535.129.03 for kernel 6.8.0-62-generic: \"" +
                          k.dkms_error + "\" (" + dir + "/make.log)");
  CHECK(f->fix ==
        std::optional<std::string>("sudo apt-get install linux-headers-6.8.0-62-generic && sudo dkms "
                                   "install nvidia/535.129.03 -k 6.8.0-62-generic"));
  CHECK_FALSE(KernelFinding(r, "driver.kernel-no-module"));
}

TEST_CASE("kernels: GRUB_DEFAULT=saved with a one-shot next_entry boots the kernel without a module",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  TwoKernels(root);
  root.Write("/etc/default/grub", "GRUB_DEFAULT=saved\nGRUB_TIMEOUT=0\n");
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("${saved_entry}"));
  std::string env =
      "# GRUB Environment Block\nsaved_entry=gnulinux-advanced-0b9f7a2e-0000-4000-8000-000000000001>"
      "gnulinux-6.8.0-60-generic-advanced-0b9f7a2e-0000-4000-8000-000000000001\n";
  root.Write("/boot/grub/grubenv", env + std::string(1024 - env.size(), '#'));
  probe::HostFacts facts = ProbeKernelTree(root);
  CHECK(facts.boot.next_kernel == kKernelOld);
  CHECK(facts.boot.next_detail ==
        "grub.cfg's default (saved: grubenv's saved_entry) \"gnulinux-advanced-0b9f7a2e-0000-4000-8000-"
        "000000000001>gnulinux-6.8.0-60-generic-advanced-0b9f7a2e-0000-4000-8000-000000000001\"");
  const verdict::LayerReport ok = JudgeKernels(facts);
  CHECK_FALSE(KernelFinding(ok, "driver.next-boot-no-module"));
  REQUIRE(KernelFinding(ok, "driver.next-boot"));
  CHECK(KernelFinding(ok, "driver.next-boot")->message ==
        "next boot: kernel 6.8.0-60-generic, which has the module");

  env =
      "# GRUB Environment Block\nsaved_entry=gnulinux-advanced-0b9f7a2e-0000-4000-8000-000000000001>"
      "gnulinux-6.8.0-60-generic-advanced-0b9f7a2e-0000-4000-8000-000000000001\n"
      "next_entry=Advanced options for Ubuntu>Ubuntu, with Linux 6.8.0-62-generic\n";
  root.Write("/boot/grub/grubenv", env + std::string(1024 - env.size(), '#'));
  facts = ProbeKernelTree(root);
  CHECK(facts.boot.next_kernel == kKernelNew);
  const verdict::LayerReport r = JudgeKernels(facts);
  CHECK(r.status == Status::kFail);
  const verdict::Finding* f = KernelFinding(r, "driver.next-boot-no-module");
  REQUIRE(f);
  CHECK(f->message ==
        "the next boot starts kernel 6.8.0-62-generic (grubenv's one-shot next_entry \"Advanced options for "
        "Ubuntu>Ubuntu, with Linux 6.8.0-62-generic\"), which has no nvidia module for this driver");
  CHECK(f->fix == KernelFinding(r, "driver.kernel-no-module")->fix);
}

TEST_CASE("kernels: a submenu default by index, \"1>2\", as grub.cfg orders it",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  TwoKernels(root);
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("1>2"));
  root.Write("/etc/default/grub", "GRUB_DEFAULT=0\n");  // grub.cfg's own default is what GRUB reads
  CHECK(ProbeKernelTree(root).boot.next_kernel == kKernelOld);
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("1>0"));
  CHECK(ProbeKernelTree(root).boot.next_kernel == kKernelNew);
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("0"));
  CHECK(ProbeKernelTree(root).boot.next_kernel == kKernelNew);
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("1>9"));
  const probe::HostFacts none = ProbeKernelTree(root);
  CHECK(none.boot.next_kernel.empty());
  CHECK(none.boot.next_detail == "grub.cfg's default \"1>9\" names no Linux entry of /boot/grub/grub.cfg");
  root.Write("/boot/grub/grub.cfg", UbuntuGrubCfg("2"));  // the firmware entry boots no kernel
  CHECK(ProbeKernelTree(root).boot.next_kernel.empty());

  const probe::GrubMenu menu = probe::ParseGrubCfg(UbuntuGrubCfg("0"));
  REQUIRE(menu.entries.size() == 3);
  CHECK(menu.entries[1].submenu);
  REQUIRE(menu.entries[1].children.size() == 4);
  CHECK(menu.entries[1].children[2].kernel == kKernelOld);
  CHECK(probe::ResolveGrubEntry(menu,
                                "Advanced options for Ubuntu>Ubuntu, with Linux 6.8.0-60-generic (recovery "
                                "mode)") == &menu.entries[1].children[3]);
  CHECK(probe::ResolveGrubEntry(menu, "1") == nullptr);  // a submenu itself boots nothing
}

TEST_CASE("kernels: a stray /lib/modules directory is no installed kernel; bad names reach no path",
          "[layers][driver][kernels]") {
  test::TempRoot root;
  TwoKernels(root);
  root.Write("/lib/modules/6.5.0-14-generic/modules.dep", "");  // left by a removed kernel
  root.Write("/var/lib/dpkg/status", KernelImage(kKernelOld) + KernelImage(kKernelNew) +
                                         KernelImage("6.5.0-14-generic", "deinstall ok config-files") +
                                         KernelImage("../../etc") + KernelImage("6.9.0-1-GENERIC"));
  root.Write(std::string("/boot/vmlinuz-") + "6.1.0-18-amd64", "");
  root.Write("/boot/vmlinuz-6.1.0-18-amd64 x", "");
  const probe::HostFacts facts = ProbeKernelTree(root);
  std::vector<std::string> names;
  for (const auto& k : facts.boot.kernels) names.push_back(k.release + ":" + k.source);
  CHECK(names ==
        std::vector<std::string>{"6.1.0-18-amd64:boot", "6.8.0-60-generic:dpkg", "6.8.0-62-generic:dpkg"});
  // No modules.dep listing modules (depmod never ran): not judged, and said so.
  const verdict::LayerReport r = JudgeKernels(facts);
  const verdict::Finding* f = KernelFinding(r, "driver.kernel-not-judged");
  REQUIRE(f);
  CHECK(f->status == Status::kSkip);
  CHECK(f->message == "no modules.dep listing modules, so not judged: kernel 6.1.0-18-amd64");
  REQUIRE(KernelFinding(r, "driver.kernel-no-module"));
  CHECK(KernelFinding(r, "driver.kernel-no-module")->message.find("6.8.0-62-generic") != std::string::npos);
}

TEST_CASE("kernels: GRUB_DEFAULT from /etc/default/grub and grub.d, the shell's values unknown",
          "[layers][driver][kernels]") {
  bool set = false;
  CHECK(probe::ParseGrubDefaultVar("GRUB_DEFAULT=0\n# GRUB_DEFAULT=2\nGRUB_DEFAULT=\"1>2\"\n", &set) ==
        std::optional<std::string>("1>2"));
  CHECK(set);
  CHECK(probe::ParseGrubDefaultVar("GRUB_TIMEOUT=5\n", &set) == std::optional<std::string>(""));
  CHECK_FALSE(set);
  CHECK_FALSE(probe::ParseGrubDefaultVar("GRUB_DEFAULT=$(cat /x)\n", &set).has_value());
  CHECK(probe::ParseGrubDefaultVar("GRUB_DEFAULT='Advanced options for Ubuntu>Ubuntu'\n", &set) ==
        std::optional<std::string>("Advanced options for Ubuntu>Ubuntu"));

  test::TempRoot root;
  TwoKernels(root);
  std::string cfg = UbuntuGrubCfg("0");
  cfg.erase(cfg.find("if [ \"${next_entry}\""),
            cfg.find("function load_video") - cfg.find("if [ \"${next_entry}\""));
  root.Write("/boot/grub/grub.cfg", cfg);
  root.Write("/etc/default/grub", "GRUB_DEFAULT=0\n");
  root.Write("/etc/default/grub.d/50-cloudimg.cfg", "GRUB_DEFAULT='1>2'\n");
  CHECK(ProbeKernelTree(root).boot.next_kernel == kKernelOld);
  root.Write("/etc/default/grub.d/60-x.cfg", "GRUB_DEFAULT=`echo 0`\n");
  const probe::HostFacts shell = ProbeKernelTree(root);
  CHECK(shell.boot.next_kernel.empty());
  CHECK(shell.boot.next_detail == "GRUB_DEFAULT is set by the shell: it cannot be read");
}

TEST_CASE("kernels: modules.dep, make.log and kernel names read as hostile input", "[probe][kernels]") {
  CHECK(probe::NvidiaInModulesDep("kernel/nvidia-535srv/nvidia.ko: \nupdates/dkms/nvidia.ko.xz:\n") ==
        "updates/dkms/nvidia.ko.xz");
  CHECK(probe::NvidiaInModulesDep("/lib/modules/6.8.0-60-generic/kernel/nvidia-550/nvidia.ko:\n") ==
        "kernel/nvidia-550/nvidia.ko");
  CHECK(probe::NvidiaInModulesDep("kernel/../../../etc/nvidia.ko:\nupdates/nvidia.ko:\nextra/nvidia.ko:\n")
            .empty());
  CHECK(probe::BranchFromModulePath("kernel/nvidia-535srv/nvidia.ko") == 535);
  CHECK(probe::BranchFromModulePath("kernel/drivers/nvidia.ko") == 0);
  CHECK(probe::LastErrorLine("ok\nmake: *** [Makefile:1] Error 2\n") == "make: *** [Makefile:1] Error 2");
  CHECK(probe::LastErrorLine("all fine\n").empty());
  CHECK(probe::LastErrorLine(std::string(300, 'x') + " error: long\n").size() == 203);
  CHECK(probe::ValidKernelRelease("6.8.0-62-generic"));
  CHECK(probe::ValidKernelRelease("6.1.0-18-cloud-amd64"));
  for (const char* bad : {"", "../x", "6.8/../x", "generic", "6.8.0 x", "6.8.0-62-GENERIC", "-6"})
    CHECK_FALSE(probe::ValidKernelRelease(bad));
}
