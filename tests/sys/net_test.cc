// The kernel's view of this host's network (sys/net.h), on the machine the tests run on: getifaddrs against
// an independent kernel interface (the SIOCGIFCONF ioctl for IPv4, /proc/net/if_inet6 for IPv6), the
// probe's live path (probe/network_nics.cc) against the same, and the rtnetlink route answer against a
// longest-prefix match over /proc/net/route. Nothing is sent: a route request only asks the kernel.
#include "sys/net.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>

#include "manifest/loader.h"
#include "probe/steps.h"
#include "sys/fs.h"

using namespace gp;

namespace {

// IPv4 interfaces by SIOCGIFCONF (netdevice(7)): one entry per address.
std::set<std::string> IoctlV4() {
  std::set<std::string> out;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  std::array<ifreq, 256> reqs{};
  ifconf conf{};
  conf.ifc_len = static_cast<int>(sizeof reqs);
  conf.ifc_req = reqs.data();
  const int rc = ::ioctl(fd, SIOCGIFCONF, &conf);
  ::close(fd);
  REQUIRE(rc == 0);
  for (size_t i = 0; i < static_cast<size_t>(conf.ifc_len) / sizeof(ifreq); ++i) out.insert(reqs[i].ifr_name);
  return out;
}

// Interfaces with a global IPv6 address: /proc/net/if_inet6's scope column 00.
std::set<std::string> ProcV6() {
  std::set<std::string> out;
  std::ifstream in("/proc/net/if_inet6");
  std::string addr, index, prefix, scope, flags, name;
  while (in >> addr >> index >> prefix >> scope >> flags >> name)
    if (scope == "00") out.insert(name);
  return out;
}

struct Route {
  std::string ifname;
  uint32_t dest = 0, mask = 0;  // network byte order, as the file writes them (host-endian hex)
  int metric = 0;
};

std::vector<Route> ProcRoutes() {
  std::vector<Route> out;
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string name, dest, gw, flags, refcnt, use, metric, mask;
    if (!(f >> name >> dest >> gw >> flags >> refcnt >> use >> metric >> mask)) continue;
    if ((std::stoul(flags, nullptr, 16) & 0x0001) == 0) continue;  // RTF_UP
    out.push_back({name, static_cast<uint32_t>(std::stoul(dest, nullptr, 16)),
                   static_cast<uint32_t>(std::stoul(mask, nullptr, 16)), std::stoi(metric)});
  }
  return out;
}

// The main table's answer for `dst` (network byte order): the longest prefix, then the lowest metric.
std::string Lookup(const std::vector<Route>& routes, uint32_t dst) {
  const Route* best = nullptr;
  for (const auto& r : routes) {
    if ((dst & r.mask) != r.dest) continue;
    if (!best || ntohl(r.mask) > ntohl(best->mask) || (r.mask == best->mask && r.metric < best->metric))
      best = &r;
  }
  return best ? best->ifname : "";
}

std::string Dotted(uint32_t net_order) {
  in_addr a{};
  a.s_addr = net_order;
  return inet_ntoa(a);
}

}  // namespace

TEST_CASE("sys net: getifaddrs names the interfaces the kernel's other interfaces name", "[sys][network]") {
  const auto a = sys::LiveInterfaceAddrs();
  REQUIRE(a);
  CHECK(a->v4 == IoctlV4());
  CHECK(a->v6 == ProcV6());
  CHECK(std::set<std::string>(a->v4_order.begin(), a->v4_order.end()) == a->v4);
  CHECK(a->v4_order.size() == a->v4.size());
  if (a->v4.count("lo")) CHECK(sys::InterfaceWithAddress("127.0.0.1") == "lo");
  CHECK(sys::InterfaceWithAddress("198.51.100.254").empty());  // TEST-NET-2, held by no interface here
  CHECK(sys::InterfaceWithAddress("not an address").empty());
}

TEST_CASE("sys net: the probe's live path reads the addresses of this machine's NICs", "[sys][network]") {
  sys::DiskFs fs("/");
  REQUIRE(fs.IsLive());
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  probe::HostFacts h;
  probe::ProbeNics(env, h);
  const auto v4 = IoctlV4();
  const auto v6 = ProcV6();
  if (h.network.nics.empty())
    WARN("this machine has no NIC with a device link: only getifaddrs was compared");
  for (const auto& d : h.network.nics) {
    INFO(d.name);
    REQUIRE(d.ipv4.has_value());  // the live path knows the addresses
    CHECK(*d.ipv4 == (v4.count(d.name) > 0));
    CHECK(*d.ipv6 == (v6.count(d.name) > 0));
  }
}

TEST_CASE("sys net: the route answer is the routing table's", "[sys][network]") {
  const auto routes = ProcRoutes();
  CHECK(sys::RouteTo("127.0.0.1").ifname == "lo");
  std::vector<uint32_t> probes = {htonl(0x08080808u), htonl(0xC0000201u)};  // 8.8.8.8, 192.0.2.1
  for (const auto& r : routes)
    if (r.mask != 0xFFFFFFFFu) probes.push_back(r.dest | htonl(1));  // the first host of each subnet
  for (uint32_t dst : probes) {
    const std::string addr = Dotted(dst);
    INFO(addr);
    const std::string want = Lookup(routes, dst);
    const sys::RouteAnswer got = sys::RouteTo(addr);
    // The kernel answers its own addresses through lo (the local table, which /proc/net/route omits).
    if (!sys::InterfaceWithAddress(addr).empty()) {
      CHECK(got.ifname == "lo");
      continue;
    }
    if (want.empty()) {
      CHECK(got.ifname.empty());
      CHECK(got.error == "no route to " + addr);
    } else {
      CHECK(got.error.empty());
      CHECK(got.ifname == want);
    }
  }
  const sys::RouteAnswer bad = sys::RouteTo("10.0.0.1; reboot");
  CHECK(bad.not_address);
  CHECK(bad.ifname.empty());
}
