// sysfs trees of RDMA hosts for the network probe and layer tests, written into a TempRoot. The shapes
// follow the kernel's files as public captures show them: github.com/leptonai/gpud's testdata
// `sys-class-infiniband-h100.0` (mlx5 devices, ports/1/{state,phys_state,rate,link_layer}: "4: ACTIVE",
// "5: LinkUp", "200 Gb/sec (2X NDR)"), the kernel's GID table (ports/N/gids/I in full form, IPv4-mapped
// GIDs as ...:0000:ffff:0a14:000b; gid_attrs/types/I "RoCE v2" or "IB/RoCE v1"; gid_attrs/ndevs/I the
// network device), and AWS EFA devices (driver efa, PCI vendor 0x1d0f, link layer "Unspecified").
// The device links are relative, as sysfs writes them, so they resolve inside the tree.
#pragma once
#include <string>

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
  }
}

inline void AddPeermem(TempRoot& t) { WriteFile(t, "/sys/module/nvidia_peermem/version", "580.95.05"); }

}  // namespace gp::test
