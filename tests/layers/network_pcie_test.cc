// The network layer's PCIe half over sysfs trees (tests/support/rdma_trees.h: the bridges' config files are
// generated there, laid out as the PCIe specification and Linux's pci_regs.h define the ACS capability):
// ACS on and off, a virtual machine, a config space without its extended part, the NIC-to-GPU affinity by
// PCIe switch and by NUMA node; and the host without RDMA, whose one line names its NIC and speed. Every
// finding is at most a warning and every warning has a fix.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/host_json.h"
#include "probe/steps.h"
#include "sample.h"
#include "support/rdma_trees.h"

using namespace gp;
using layers::Finding;
using layers::LayerReport;
using layers::Status;
using test::RdmaPortSpec;

namespace {

const Finding* Find(const LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

LayerReport Check(test::TempRoot& t, test::Inputs& in) {
  probe::ProbeEnv env;
  env.fs = &t.fs();
  env.compat = &manifest::EmbeddedCompat();
  in.host.network = {};
  probe::ProbeNetwork(env, in.host);
  LayerReport r = layers::CheckNetwork(in.in());
  for (const auto& f : r.findings) {
    CHECK(f.status != Status::kFail);
    if (f.status == Status::kWarn) CHECK(f.fix.has_value());
    CHECK(f.code.rfind("network.", 0) == 0);
  }
  return r;
}

// Two GPUs, each behind its own downstream port of one PCIe switch (root port 00:01.0, switch upstream port
// 01:00.0, downstream ports 02:0N.0), and one NDR NIC on a downstream port of the same switch.
void SwitchHost(test::TempRoot& t, test::Inputs& in, const std::string& config) {
  in.host.gpus.resize(2);
  in.host.gpus[0].pci = "0000:03:00.0";
  in.host.gpus[1].pci = "0000:04:00.0";
  test::AddPciPath(t, {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, "0000:03:00.0", config);
  test::AddPciPath(t, {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, "0000:04:00.0", config);
  test::AddPciPath(t, {"0000:00:01.0", "0000:01:00.0", "0000:02:02.0"}, "0000:05:00.0", config);
  test::AddRdmaDevice(t, "mlx5_0", "0000:05:00.0", "mlx5_core", "0x15b3", RdmaPortSpec{});
  test::AddPeermem(t);
}

}  // namespace

TEST_CASE("network pcie: the ACS Control register from a config space", "[probe][network]") {
  CHECK(probe::AcsControl(test::BridgeConfig(true, 0x001d)) == std::optional<uint16_t>(0x001d));
  CHECK(probe::AcsControl(test::BridgeConfig(true, 0)) == std::optional<uint16_t>(0));
  CHECK_FALSE(probe::AcsControl(test::BridgeConfig(false, 0)));
  CHECK_FALSE(probe::AcsControl(test::BridgeConfig(true, 0x1d, 256)));
  CHECK_FALSE(probe::AcsControl(test::BridgeConfig(true, 0x1d, 0x14a)));  // cut inside the capability
  std::string loop = test::BridgeConfig(false, 0);
  loop[0x102] = 0x01;  // a next pointer back to 0x100: the walk stops
  loop[0x103] = 0x10;
  CHECK_FALSE(probe::AcsControl(loop));
  CHECK(probe::IsPciAddress("0000:1a:00.0"));
  CHECK_FALSE(probe::IsPciAddress("pci0000:00"));
  CHECK_FALSE(probe::IsPciAddress("0000:1a:00.0/.."));
}

TEST_CASE("network pcie: ACS on the switch above GPUs and NIC is a warning with NCCL's fix",
          "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  SwitchHost(t, in, test::BridgeConfig(true, 0x001d));  // SrcValid, ReqRedir, CmpltRedir, UpstreamFwd
  LayerReport r = Check(t, in);
  CHECK(in.host.network.bridges.size() == 5);
  REQUIRE(in.host.network.upstream.count("0000:05:00.0"));
  CHECK(in.host.network.upstream.at("0000:05:00.0") ==
        std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:02.0"});
  const Finding* acs = Find(r, "network.acs-enabled");
  REQUIRE(acs);
  CHECK(acs->status == Status::kWarn);
  CHECK(acs->message.find("ACS is on at 5 PCIe bridges") == 0);
  CHECK(acs->message.find("0000:00:01.0 (SrcValid,ReqRedir,CmpltRedir)") != std::string::npos);
  CHECK(acs->fix->find("setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=0000") != std::string::npos);
  CHECK(acs->fix->find("PCI Access Control Services (ACS)") != std::string::npos);
  const Finding* aff = Find(r, "network.gpu-nic-affinity");
  REQUIRE(aff);
  CHECK(aff->message == "every GPU has an RDMA device on its PCIe switch (2) or NUMA node (0)");
}

TEST_CASE("network pcie: ACS off; Egress Control alone is not a finding", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  SwitchHost(t, in, test::BridgeConfig(true, 0x0020));
  LayerReport r = Check(t, in);
  CHECK_FALSE(Find(r, "network.acs-enabled"));
  REQUIRE(Find(r, "network.acs-off"));
  CHECK(Find(r, "network.acs-off")->message ==
        "ACS redirect off on the 5 PCIe bridges above the GPUs and RDMA devices");
  CHECK(r.status == Status::kOk);
}

TEST_CASE("network pcie: in a VM ACS is expected; without root it is a skip", "[layers][network]") {
  SECTION("DMI names the hypervisor") {
    test::TempRoot t;
    test::Inputs in;
    SwitchHost(t, in, test::BridgeConfig(true, 0x001d));
    test::WriteFile(t, "/sys/class/dmi/id/sys_vendor", "QEMU");
    test::WriteFile(t, "/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)");
    LayerReport r = Check(t, in);
    CHECK_FALSE(Find(r, "network.acs-enabled"));
    REQUIRE(Find(r, "network.acs-vm"));
    CHECK(Find(r, "network.acs-vm")->status == Status::kSkip);
    CHECK(Find(r, "network.acs-vm")->message.find("DMI says QEMU Standard PC") != std::string::npos);
    CHECK(Find(r, "network.affinity-not-judged"));
  }
  SECTION("the CPU's hypervisor flag") {
    test::TempRoot t;
    test::Inputs in;
    SwitchHost(t, in, test::BridgeConfig(true, 0x001d));
    test::WriteFile(t, "/sys/class/dmi/id/sys_vendor", "Amazon EC2");
    test::WriteFile(t, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme de pse hypervisor lahf_lm\n");
    LayerReport r = Check(t, in);
    REQUIRE(Find(r, "network.acs-vm"));
    CHECK(Find(r, "network.acs-vm")->message.find("hypervisor flag") != std::string::npos);
  }
  SECTION("a config file without the extended space (read without root)") {
    test::TempRoot t;
    test::Inputs in;
    SwitchHost(t, in, test::BridgeConfig(true, 0x001d, 64));
    LayerReport r = Check(t, in);
    REQUIRE(Find(r, "network.acs-not-read"));
    CHECK(Find(r, "network.acs-not-read")->status == Status::kSkip);
    CHECK(Find(r, "network.acs-not-read")->message.find("holds 64 bytes") != std::string::npos);
  }
}

TEST_CASE("network pcie: a GPU with no NIC on its switch or NUMA node", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  const std::string off = test::BridgeConfig(true, 0);
  in.host.gpus.resize(2);
  in.host.gpus[0].pci = "0000:03:00.0";
  in.host.gpus[1].index = 1;
  in.host.gpus[1].pci = "0000:83:00.0";
  in.host.nvidia_pci = {{"0000:03:00.0", "0x10de", "0x2330", "0x030200", "nvidia", 0, "", ""},
                        {"0000:83:00.0", "0x10de", "0x2330", "0x030200", "nvidia", 1, "", ""}};
  test::AddPciPath(t, {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, "0000:03:00.0", off, "0");
  test::AddPciPath(t, {"0000:80:01.0", "0000:81:00.0", "0000:82:00.0"}, "0000:83:00.0", off, "1");
  test::AddPciPath(t, {"0000:00:03.0"}, "0000:05:00.0", off, "0");  // the NIC on socket 0's root port
  test::AddRdmaDevice(t, "mlx5_0", "0000:05:00.0", "mlx5_core", "0x15b3", RdmaPortSpec{});
  LayerReport r = Check(t, in);
  REQUIRE(in.host.network.rdma.size() == 1);
  CHECK(in.host.network.rdma[0].numa_node == std::optional<int>(0));
  const Finding* far = Find(r, "network.gpu-nic-far");
  REQUIRE(far);
  CHECK(far->status == Status::kWarn);
  CHECK(far->message.find("GPU 1 (0000:83:00.0) has no RDMA device") == 0);
  CHECK_FALSE(Find(r, "network.gpu-nic-affinity"));
  CHECK(Find(r, "network.acs-off"));
}

TEST_CASE("network pcie: a RoCE port whose network device has no IPv4 address", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  RdmaPortSpec roce;
  roce.link_layer = "Ethernet";
  roce.netdev = "ens8f0np0";
  test::AddRdmaDevice(t, "mlx5_0", "0000:20:00.0", "mlx5_core", "0x15b3", roce);
  // The tree's addresses: a connected route on another interface only, no global IPv6.
  test::WriteFile(t, "/proc/net/route",
                  "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                  "eno1\t0014A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0");
  test::WriteFile(t, "/proc/net/if_inet6", "fe80000000000000020c29fffe4d5a6b 02 40 20 80 ens8f0np0");
  LayerReport r = Check(t, in);
  REQUIRE(in.host.network.nics.size() == 1);
  CHECK(in.host.network.nics[0].ipv4 == std::optional<bool>(false));
  CHECK(in.host.network.nics[0].ipv6 == std::optional<bool>(false));
  const Finding* f = Find(r, "network.netdev-no-address");
  REQUIRE(f);
  CHECK(f->message.find("has no IPv4 address, so the port has no IPv4-mapped RoCE v2 GID") !=
        std::string::npos);
  CHECK(f->fix->find("give ens8f0np0 an IPv4 address") == 0);
  CHECK_FALSE(Find(r, "network.roce-no-v2-gid"));
}

TEST_CASE("network pcie: a host without RDMA gets one line naming its NIC and speed", "[layers][network]") {
  test::TempRoot t;
  test::Inputs in;
  test::AddNic(t, "eno1", "0000:c1:00.0", "25000");
  test::AddNic(t, "eno2", "0000:c1:00.1", "-1", "down");
  test::AddNic(t, "enp5s0", "0000:05:00.0", "1000");
  t.fs().MakeDirs("/sys/class/net/docker0", 0755);  // virtual: no device link
  test::WriteFile(t, "/sys/class/net/docker0/operstate", "up");
  const layers::Layer* row = layers::FindLayer("network");
  LayerReport r = Check(t, in);
  CHECK(row->shown(in.host));
  CHECK(in.host.network.nics.size() == 3);
  CHECK_FALSE(in.host.network.nics[1].speed_mbps);
  CHECK_FALSE(in.host.network.nics[0].ipv4);  // the tree has no /proc/net: addresses unknown
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].code == "network.no-rdma");
  CHECK(r.status == Status::kOk);
  CHECK(
      r.detail ==
      "no RDMA device: traffic between nodes goes over TCP at the NIC's speed: eno1 (25 Gb/s), enp5s0 (1000 "
      "Mb/s)");
}

TEST_CASE("network pcie: the host JSON keeps NICs, bridges, ACS and the VM verdict", "[probe][network]") {
  test::TempRoot t;
  test::Inputs in;
  SwitchHost(t, in, test::BridgeConfig(true, 0x0001));
  test::AddNic(t, "eno1", "0000:c1:00.0", "25000");
  Check(t, in);
  const probe::NetworkInfo& n = in.host.network;
  in.host.network.vm = "the CPU has the hypervisor flag";
  nlohmann::json j = probe::HostToJson(in.host);
  probe::HostFacts back = probe::HostFromJson(j, "host.json");
  CHECK(back.network.nics.size() == 1);
  CHECK(back.network.nics[0].speed_mbps == std::optional<int64_t>(25000));
  REQUIRE(back.network.bridges.size() == n.bridges.size());
  CHECK(back.network.bridges[0].acs_ctrl == std::optional<uint16_t>(1));
  CHECK(back.network.upstream == n.upstream);
  CHECK(back.network.vm == n.vm);
  j["network"]["bridges"][0]["address"] = "0000:00:01.0; reboot";
  CHECK_THROWS(probe::HostFromJson(j, "host.json"));
}
