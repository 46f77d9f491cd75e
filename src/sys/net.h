// The kernel's view of this host's network, asked directly (no command): which interfaces have addresses
// (getifaddrs(3)), and the interface the kernel routes a destination through (an RTM_GETROUTE request over
// rtnetlink, the question `ip route get ADDRESS` asks). The live host only: under --root nothing here runs.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gp::sys {

struct InterfaceAddrs {
  std::set<std::string> v4;  // interfaces with an IPv4 address
  std::set<std::string> v6;  // interfaces with a global IPv6 address (not link-local, not loopback)
  // The interfaces with an IPv4 address in the kernel's order (getifaddrs lists them by interface index),
  // each once: the order NCCL walks when it picks an interface itself.
  std::vector<std::string> v4_order;
};

// nullopt when getifaddrs fails.
std::optional<InterfaceAddrs> LiveInterfaceAddrs();

// The interface that holds `address` (an IPv4 or IPv6 literal) as one of its own; "" when none does.
std::string InterfaceWithAddress(const std::string& address);

struct RouteAnswer {
  std::string ifname;        // the output interface ("" when the answer names none)
  std::string source;        // the preferred source address the kernel would use ("" when none)
  std::string error;         // why there is no answer ("" when there is one): "no route to 10.1.2.3", ...
  bool not_address = false;  // `address` was no IP literal (error says so)
};

// The route the kernel takes to `address`, an IPv4 or IPv6 literal (callers validate it first; anything else
// is an error answer). Bounded: one request, one reply of at most 32 KiB, a 2 s receive timeout.
RouteAnswer RouteTo(const std::string& address);

}  // namespace gp::sys
