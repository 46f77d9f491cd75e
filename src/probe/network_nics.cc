// The physical network devices (/sys/class/net/NAME with a device link, so not lo, docker0, veth or
// bridges): the PCI function, operstate, link speed, and whether each has an IPv4 and a global IPv6 address.
// Addresses come from getifaddrs(3) on the live host (sys/net.h); under --root nothing is executed or asked
// of the kernel, so they come from the tree's /proc/net/route (a directly connected route names an interface
// with an address on that subnet) and /proc/net/if_inet6, and are unknown when the tree has neither.
#include <algorithm>
#include <cctype>
#include <set>

#include "probe/steps.h"
#include "sys/net.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr const char* kNetDir = "/sys/class/net";

// An interface name as the kernel allows it in a path: at most 15 bytes of letters, digits, '_', '-', '.',
// ':', '@' excluded (no '/', not "." or "..").
bool IfName(const std::string& n) {
  if (n.empty() || n.size() > 15 || n == "." || n == "..") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  });
}

struct IfAddrs {
  bool known = false;
  std::set<std::string> v4, v6;
};

IfAddrs LiveAddrs() {
  IfAddrs a;
  if (auto live = sys::LiveInterfaceAddrs()) a = {true, std::move(live->v4), std::move(live->v6)};
  return a;
}

IfAddrs TreeAddrs(const sys::Fs& fs) {
  IfAddrs a;
  constexpr size_t kMax = size_t{256} * 1024;
  // /proc/net/route: "Iface Destination Gateway Flags ..." in hex; gateway 0 is the interface's own subnet.
  if (auto t = fs.ReadPrefix("/proc/net/route", kMax)) {
    a.known = true;
    for (const auto& line : Split(*t, '\n')) {
      auto f = SplitWords(line);
      if (f.size() >= 3 && f[0] != "Iface" && f[2] == "00000000" && IfName(f[0])) a.v4.insert(f[0]);
    }
  }
  // /proc/net/if_inet6: "ADDRESS IFINDEX PREFIXLEN SCOPE FLAGS NAME"; scope 00 is global.
  if (auto t = fs.ReadPrefix("/proc/net/if_inet6", kMax)) {
    a.known = true;
    for (const auto& line : Split(*t, '\n')) {
      auto f = SplitWords(line);
      if (f.size() >= 6 && f[3] == "00" && IfName(f[5])) a.v6.insert(f[5]);
    }
  }
  return a;
}

std::string NicValue(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 64);
  return t ? std::string(Trim(*t)) : "";
}

}  // namespace

void ProbeNics(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  std::vector<std::string> names = fs.List(kNetDir);
  std::sort(names.begin(), names.end());
  std::vector<NetDevice> nics;
  for (const auto& name : names) {
    const std::string dir = std::string(kNetDir) + "/" + name;
    if (!IfName(name) || !fs.Exists(dir + "/device")) continue;
    if (nics.size() >= kMaxRdmaDevices) {
      facts.probe_notes.push_back("network: more than " + std::to_string(kMaxRdmaDevices) +
                                  " network devices; the rest are not read");
      break;
    }
    NetDevice d;
    d.name = name;
    if (auto link = fs.ReadLink(dir + "/device")) {
      std::string target = *link;
      auto slash = target.rfind('/');
      std::string last = slash == std::string::npos ? target : target.substr(slash + 1);
      if (IsPciAddress(last)) d.pci = last;
    }
    d.operstate = NicValue(fs, dir + "/operstate");
    if (!std::all_of(d.operstate.begin(), d.operstate.end(),
                     [](char c) { return std::islower(static_cast<unsigned char>(c)); }))
      d.operstate = "";
    if (auto speed = ParseUnsigned(NicValue(fs, dir + "/speed")); speed && *speed > 0 && *speed < 100000000)
      d.speed_mbps = static_cast<int64_t>(*speed);
    nics.push_back(std::move(d));
  }
  if (nics.empty()) return;
  IfAddrs a = Live(env) ? LiveAddrs() : TreeAddrs(fs);
  if (a.known)
    for (auto& d : nics) {
      d.ipv4 = a.v4.count(d.name) > 0;
      d.ipv6 = a.v6.count(d.name) > 0;
    }
  facts.network.nics = std::move(nics);
}

}  // namespace gp::probe
