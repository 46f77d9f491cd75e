// The inter-node network, from files only (sysfs, live or under --root): each RDMA device of
// /sys/class/infiniband with its PCI function, driver and ports (state, physical state, link layer, rate,
// whether a RoCE v2 GID carries an IPv4 address, the network device and its operstate), and whether the
// GPU peer-memory module is loaded, at the paths NCCL checks (NVIDIA/nccl v2.30.7-1,
// src/transport/net_ib/gdr.cc).
#include <algorithm>
#include <cctype>

#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr const char* kIbDir = "/sys/class/infiniband";
constexpr size_t kMaxPorts = 16;
constexpr size_t kMaxGids = 256;

// The paths NCCL's GDR check reads (gdr.cc: KNL_MODULE_LOADED): the MLNX_OFED peer-memory client, its
// non-coherent variant, and the nvidia-peermem module.
constexpr const char* kPeermemPaths[] = {"/sys/kernel/mm/memory_peers/nv_mem/version",
                                         "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
                                         "/sys/module/nvidia_peermem/version"};

// A sysfs entry name safe to put in a path: letters, digits, '_', '-', '.', ':' (no '/', not "." or "..").
bool SafeName(const std::string& n) {
  if (n.empty() || n.size() > 64 || n == "." || n == "..") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  });
}

std::string ReadValue(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 256);
  if (!t) return "";
  std::string v(Trim(*t));
  for (char& c : v)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return v;
}

// "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LinkUp".
std::string AfterNumber(const std::string& v) {
  auto colon = v.find(':');
  return colon == std::string::npos ? v : std::string(Trim(std::string_view(v).substr(colon + 1)));
}

// The last component of a link's target ("../../../0000:1a:00.0" -> "0000:1a:00.0"); "" when no link.
std::string LinkName(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadLink(path);
  if (!t) return "";
  std::string s = *t;
  while (!s.empty() && s.back() == '/') s.pop_back();
  auto slash = s.rfind('/');
  std::string name = slash == std::string::npos ? s : s.substr(slash + 1);
  return SafeName(name) ? name : "";
}

void ReadPort(const sys::Fs& fs, const std::string& dir, const std::string& dev_netdev, RdmaPort& p) {
  p.state = AfterNumber(ReadValue(fs, dir + "/state"));
  p.phys_state = AfterNumber(ReadValue(fs, dir + "/phys_state"));
  p.link_layer = ReadValue(fs, dir + "/link_layer");
  p.rate = ReadValue(fs, dir + "/rate");
  // The GID table: gid_attrs/types/N is "RoCE v2" or "IB/RoCE v1" (reading an empty entry fails);
  // gids/N is the GID in full form, IPv4-mapped ones as 0000:...:ffff:a.b.c.d in hex.
  std::vector<std::string> types = fs.List(dir + "/gid_attrs/types");
  if (types.size() > kMaxGids) types.resize(kMaxGids);
  std::string gid_netdev;
  for (const auto& n : types) {
    if (!SafeName(n) || ReadValue(fs, dir + "/gid_attrs/types/" + n) != "RoCE v2") continue;
    if (!StartsWith(ToLower(ReadValue(fs, dir + "/gids/" + n)), "0000:0000:0000:0000:0000:ffff:")) continue;
    p.roce_v2_ipv4 = true;
    if (gid_netdev.empty()) gid_netdev = ReadValue(fs, dir + "/gid_attrs/ndevs/" + n);
    break;
  }
  p.netdev = SafeName(gid_netdev) ? gid_netdev : dev_netdev;
  if (!p.netdev.empty()) p.netdev_state = ReadValue(fs, "/sys/class/net/" + p.netdev + "/operstate");
}

}  // namespace

void ProbeNetwork(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  NetworkInfo& n = facts.network;
  std::vector<std::string> names = fs.List(kIbDir);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (!SafeName(name)) continue;
    if (n.rdma.size() >= kMaxRdmaDevices) {
      facts.probe_notes.push_back("network: more than " + std::to_string(kMaxRdmaDevices) +
                                  " RDMA devices; the rest are not read");
      break;
    }
    const std::string dir = std::string(kIbDir) + "/" + name;
    RdmaDevice d;
    d.name = name;
    d.pci = LinkName(fs, dir + "/device");
    d.driver = LinkName(fs, dir + "/device/driver");
    d.vendor = ToLower(ReadValue(fs, dir + "/device/vendor"));
    d.efa = d.driver == "efa" || d.vendor == "0x1d0f";
    std::string dev_netdev;
    for (const auto& nd : fs.List(dir + "/device/net"))
      if (SafeName(nd) && (dev_netdev.empty() || nd < dev_netdev)) dev_netdev = nd;
    std::vector<std::string> ports = fs.List(dir + "/ports");
    std::sort(ports.begin(), ports.end());
    for (const auto& p : ports) {
      auto number = ParseUnsigned(p);
      if (!number || *number == 0 || *number > 255 || d.ports.size() >= kMaxPorts) continue;
      RdmaPort port;
      port.number = static_cast<int>(*number);
      ReadPort(fs, dir + "/ports/" + p, dev_netdev, port);
      d.ports.push_back(std::move(port));
    }
    n.rdma.push_back(std::move(d));
  }
  for (const char* p : kPeermemPaths) {
    if (fs.Exists(p)) {
      n.peermem = true;
      n.peermem_path = p;
      break;
    }
  }
  ProbeNics(env, facts);
  ProbePciPaths(env, facts);
}

}  // namespace gp::probe
