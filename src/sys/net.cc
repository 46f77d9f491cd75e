// getifaddrs(3) and one rtnetlink route request (rtnetlink(7): RTM_GETROUTE with RTA_DST, answered with
// RTM_NEWROUTE carrying RTA_OIF and RTA_PREFSRC; the interface index named through if_indextoname(3)).
#include "sys/net.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace gp::sys {

std::optional<InterfaceAddrs> LiveInterfaceAddrs() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  InterfaceAddrs a;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !i->ifa_name) continue;
    if (i->ifa_addr->sa_family == AF_INET && a.v4.insert(i->ifa_name).second)
      a.v4_order.push_back(i->ifa_name);
    if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* s6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      if (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) && !IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
        a.v6.insert(i->ifa_name);
    }
  }
  freeifaddrs(list);
  return a;
}

std::string InterfaceWithAddress(const std::string& address) {
  std::array<unsigned char, 16> want{};
  int family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), want.data()) != 1) {
    family = AF_INET6;
    if (inet_pton(AF_INET6, address.c_str(), want.data()) != 1) return "";
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || !i->ifa_name || i->ifa_addr->sa_family != family) continue;
    const void* have =
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr);
    if (std::memcmp(have, want.data(), family == AF_INET ? 4 : 16) == 0) found = i->ifa_name;
  }
  freeifaddrs(list);
  return found;
}

namespace {

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// The reply's attributes: the output interface and the preferred source.
RouteAnswer ReadRoute(const rtmsg* rt, size_t len, int family) {
  RouteAnswer out;
  int len_left = static_cast<int>(len);
  for (const rtattr* a = RTM_RTA(rt); RTA_OK(a, len_left); a = RTA_NEXT(a, len_left)) {
    if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= sizeof(int)) {
      int index = 0;
      std::memcpy(&index, RTA_DATA(a), sizeof index);
      std::array<char, IF_NAMESIZE> name{};
      if (index > 0 && if_indextoname(static_cast<unsigned>(index), name.data())) out.ifname = name.data();
    } else if (a->rta_type == RTA_PREFSRC) {
      std::array<char, INET6_ADDRSTRLEN> text{};
      if (RTA_PAYLOAD(a) >= (family == AF_INET ? 4u : 16u) &&
          inet_ntop(family, RTA_DATA(a), text.data(), text.size()))
        out.source = text.data();
    }
  }
  if (out.ifname.empty()) out.error = "the kernel's route names no interface";
  return out;
}

// An RTM_GETROUTE request: the header, the route message and room for its RTA_DST attribute.
struct RouteRequest {
  nlmsghdr nh;
  rtmsg rt;
  std::array<char, 64> attrs;
};

// Fills `req` to ask the kernel's route to destination `dst` (`dst_len` bytes of address `family`).
void FillRouteRequest(RouteRequest& req, int family, const std::array<unsigned char, 16>& dst,
                      size_t dst_len) {
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = 1;
  req.rt.rtm_family = static_cast<unsigned char>(family);
  req.rt.rtm_dst_len = static_cast<unsigned char>(dst_len * 8);
  auto* attr = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&req.nh) + NLMSG_ALIGN(req.nh.nlmsg_len));
  attr->rta_type = RTA_DST;
  attr->rta_len = static_cast<unsigned short>(RTA_LENGTH(dst_len));
  std::memcpy(RTA_DATA(attr), dst.data(), dst_len);
  req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(attr->rta_len);
}

// The route in the kernel's reply (`n` bytes in `buf`) to the request for `address`: the first route
// message answering it, or the error the kernel sent instead.
RouteAnswer ReadRouteReply(std::vector<char>& buf, size_t n, const std::string& address, int family) {
  RouteAnswer out;
  size_t left = n;
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
    if (h->nlmsg_seq != 1) continue;
    if (h->nlmsg_type == NLMSG_ERROR) {
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
      if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr)) || e->error == 0) continue;
      out.error =
          (e->error == -ENETUNREACH || e->error == -EHOSTUNREACH ? "no route to " + address
                                                                 : "the kernel refused the route "
                                                                   "request: " +
                                                                       std::string(std::strerror(-e->error)));
      return out;
    }
    if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) continue;
    const auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(h));
    return ReadRoute(rt, RTM_PAYLOAD(h), family);
  }
  out.error = "the kernel's reply held no route";
  return out;
}

}  // namespace

RouteAnswer RouteTo(const std::string& address) {
  RouteAnswer out;
  RouteRequest req{};
  std::array<unsigned char, 16> dst{};
  int family = AF_INET;
  size_t dst_len = 4;
  if (inet_pton(AF_INET, address.c_str(), dst.data()) != 1) {
    family = AF_INET6;
    dst_len = 16;
    if (inet_pton(AF_INET6, address.c_str(), dst.data()) != 1) {
      out.error = "not an IP address";
      out.not_address = true;
      return out;
    }
  }
  FillRouteRequest(req, family, dst, dst_len);

  Socket s(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (s.fd() < 0) {
    out.error = Errno("netlink socket");
    return out;
  }
  timeval tv{2, 0};
  ::setsockopt(s.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(s.fd(), &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    out.error = Errno("netlink request");
    return out;
  }
  std::vector<char> buf(32UL * 1024);
  const ssize_t n = ::recv(s.fd(), buf.data(), buf.size(), 0);
  if (n < 0) {
    out.error = Errno("netlink reply");
    return out;
  }
  return ReadRouteReply(buf, static_cast<size_t>(n), address, family);
}

}  // namespace gp::sys
