// sysfs trees of RDMA hosts for the network probe and layer tests, written into a TempRoot. The shapes
// follow the kernel's files as public captures show them: github.com/leptonai/gpud's testdata
// `sys-class-infiniband-h100.0` (mlx5 devices, ports/1/{state,phys_state,rate,link_layer}: "4: ACTIVE",
// "5: LinkUp", "200 Gb/sec (2X NDR)"), the kernel's GID table (ports/N/gids/I in full form, IPv4-mapped
// GIDs as ...:0000:ffff:0a14:000b; gid_attrs/types/I "RoCE v2" or "IB/RoCE v1"; gid_attrs/ndevs/I the
// network device), and AWS EFA devices (driver efa, PCI vendor 0x1d0f, link layer "Unspecified").
// The device links are relative, as sysfs writes them, so they resolve inside the tree.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "apply/harness.h"

namespace gp::test {

struct RdmaPortSpec {
  std::string state = "4: ACTIVE";
  std::string phys_state = "5: LinkUp";
  std::string link_layer = "InfiniBand";
  std::string rate = "400 Gb/sec (4X NDR)";
  bool roce_v2_gid = false;  // an IPv4-mapped RoCE v2 GID at index 3 (RoCE only)
  std::string netdev;        // the PCI function's network device ("" none)
  std::string operstate = "up";
};

inline void WriteFile(TempRoot& t, const std::string& path, const std::string& text) {
  t.fs().MakeDirs(path.substr(0, path.rfind('/')), 0755);
  t.Write(path, text + "\n");
}

// /sys/class/infiniband/NAME -> the PCI function ADDR (driver DRIVER, vendor VENDOR), one port.
inline void AddRdmaDevice(TempRoot& t, const std::string& name, const std::string& addr,
                          const std::string& driver, const std::string& vendor, const RdmaPortSpec& p) {
  const std::string pci = "/sys/bus/pci/devices/" + addr;
  if (!t.Exists(pci + "/vendor")) {  // a function the tree already has (a fixture host's NIC) stays as it is
    WriteFile(t, pci + "/vendor", vendor);
    t.fs().MakeDirs("/sys/bus/pci/drivers/" + driver, 0755);
    t.Symlink("../../../../bus/pci/drivers/" + driver, pci + "/driver");
  }
  const std::string dev = "/sys/class/infiniband/" + name;
  t.Symlink("../../../bus/pci/devices/" + addr, dev + "/device");
  const std::string port = dev + "/ports/1";
  WriteFile(t, port + "/state", p.state);
  WriteFile(t, port + "/phys_state", p.phys_state);
  WriteFile(t, port + "/link_layer", p.link_layer);
  WriteFile(t, port + "/rate", p.rate);
  // GID 0: the link-local one every port has (RoCE v1 type on Ethernet).
  WriteFile(t, port + "/gids/0", "fe80:0000:0000:0000:9a03:9bff:fe1d:8a42");
  WriteFile(t, port + "/gid_attrs/types/0", "IB/RoCE v1");
  if (p.link_layer == "Ethernet") {
    WriteFile(t, port + "/gids/1", "fe80:0000:0000:0000:9a03:9bff:fe1d:8a42");
    WriteFile(t, port + "/gid_attrs/types/1", "RoCE v2");
    if (p.roce_v2_gid) {
      WriteFile(t, port + "/gids/2", "0000:0000:0000:0000:0000:ffff:0a14:000b");
      WriteFile(t, port + "/gid_attrs/types/2", "IB/RoCE v1");
      WriteFile(t, port + "/gids/3", "0000:0000:0000:0000:0000:ffff:0a14:000b");
      WriteFile(t, port + "/gid_attrs/types/3", "RoCE v2");
      WriteFile(t, port + "/gid_attrs/ndevs/3", p.netdev);
    }
  }
  if (!p.netdev.empty()) {
    t.fs().MakeDirs(pci + "/net/" + p.netdev, 0755);
    WriteFile(t, "/sys/class/net/" + p.netdev + "/operstate", p.operstate);
    t.Symlink("../../../bus/pci/devices/" + addr, "/sys/class/net/" + p.netdev + "/device");
  }
}

// A physical NIC without RDMA: /sys/class/net/NAME with its device link, operstate and speed ("" none).
inline void AddNic(TempRoot& t, const std::string& name, const std::string& addr, const std::string& speed,
                   const std::string& operstate = "up") {
  t.fs().MakeDirs("/sys/bus/pci/devices/" + addr, 0755);
  t.Symlink("../../../bus/pci/devices/" + addr, "/sys/class/net/" + name + "/device");
  WriteFile(t, "/sys/class/net/" + name + "/operstate", operstate);
  if (!speed.empty()) WriteFile(t, "/sys/class/net/" + name + "/speed", speed);
}

// A bridge's config space with the ACS extended capability, laid out as the PCIe Base Specification and
// Linux's include/uapi/linux/pci_regs.h define it: the extended capability list from offset 0x100, each
// header (ID in bits 0-15, version 16-19, next offset 20-31), here AER (ID 0x0001) at 0x100 and ACS
// (PCI_EXT_CAP_ID_ACS 0x000D) at 0x148 with its Capability register at +4 and Control register
// (PCI_ACS_CTRL) at +6; the Control bits are PCI_ACS_SV 0x01, PCI_ACS_RR 0x04, PCI_ACS_CR 0x08.
// `acs` false leaves ACS out; `size` below 4096 cuts the file as the kernel does for a reader without
// root (64 bytes) or a device without extended config space (256).
inline std::string BridgeConfig(bool acs, uint16_t ctrl, size_t size = 4096) {
  std::string c(4096, '\0');
  auto put32 = [&](size_t off, uint32_t v) {
    for (int i = 0; i < 4; ++i) c[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put32(0x00, 0xc01010b5);  // vendor 0x10b5 (Broadcom / PLX), device 0xc010
  c[0x0e] = 0x01;           // header type 1: a PCI-to-PCI bridge
  put32(0x100, 0x0001u | 1u << 16 | (acs ? 0x148u : 0u) << 20);
  if (acs) {
    put32(0x148, 0x000Du | 1u << 16);
    put32(0x14c, 0x005fu | static_cast<uint32_t>(ctrl) << 16);
  }
  c.resize(size);
  return c;
}

// The function ADDR below CHAIN (its bridges, root port first) under host bridge pci0000:00, laid out as
// sysfs does it: the real directories under /sys/devices/pci0000:00/..., each function and bridge linked from
// /sys/bus/pci/devices (relative links), each bridge with `bridge_config` as its config file, the function's
// numa_node ("" none).
inline void AddPciPath(TempRoot& t, const std::vector<std::string>& chain, const std::string& addr,
                       const std::string& bridge_config, const std::string& numa = "") {
  std::string dir = "/sys/devices/pci0000:00";
  auto link = [&](const std::string& name) {
    dir += "/" + name;
    t.fs().MakeDirs(dir, 0755);
    if (!t.Exists("/sys/bus/pci/devices/" + name))
      t.Symlink("../../.." + dir.substr(4), "/sys/bus/pci/devices/" + name);
  };
  for (const auto& b : chain) {
    link(b);
    if (!t.Exists(dir + "/config")) t.Write(dir + "/config", bridge_config);
  }
  link(addr);
  if (!numa.empty()) WriteFile(t, dir + "/numa_node", numa);
}

inline void AddPeermem(TempRoot& t) { WriteFile(t, "/sys/module/nvidia_peermem/version", "580.95.05"); }

}  // namespace gp::test
