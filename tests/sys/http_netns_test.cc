// The refusal half of "plain http only to a loopback peer", on a real connection: a server on a TEST-NET-1
// address (RFC 5737) inside a private network namespace that tests/integration/http_netns.sh prepares
// (`unshare -n`, lo up, 192.0.2.1/32 added to lo: no interface leads out, so nothing can leave it).
// Hidden from the default run ([.netns]); the test refuses to run in the machine's own network namespace.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "apply/harness.h"
#include "sys/http.h"
#include "sys/python_http_server.h"

using namespace gp;

namespace {
std::string NetNs(const char* pid) {
  char buf[128] = {0};
  const std::string link = std::string("/proc/") + pid + "/ns/net";
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("curl client: plain http to a non-loopback peer is refused before the request is sent",
          "[.netns]") {
  const char* addr = std::getenv("GP_NETNS_ADDR");
  REQUIRE(addr != nullptr);  // set by tests/integration/http_netns.sh, which prepares the namespace
  REQUIRE(std::string(addr) == "192.0.2.1");
  const std::string ns = NetNs("self");
  REQUIRE_FALSE(ns.empty());
  REQUIRE(ns != NetNs("1"));  // never in the machine's own network namespace

  test::TempRoot root;
  root.Write("/k.gpg", "key");
  root.Write("/secret-get", "must not be fetched");
  root.Write("/secret-stream", "must not be fetched");
  const std::string log = root.path() + "/server.log";
  // Every address here (only lo's), a free port; listening once constructed.
  test::PythonHttpServer server(root.path(), "0.0.0.0", 0, log);
  const std::string p = std::to_string(server.port());
  auto http = sys::MakeCurlHttpClient();

  sys::HttpResponse r = http->Get("http://127.0.0.1:" + p + "/k.gpg", std::chrono::seconds(5));
  INFO(r.error);
  REQUIRE(r.ok());  // the server answers on loopback

  r = http->Get("http://192.0.2.1:" + p + "/secret-get", std::chrono::seconds(5));
  CHECK_FALSE(r.ok());
  CHECK(r.body.empty());
  CHECK(r.error == "plain http connected to 192.0.2.1, not a loopback address; no request was sent");

  r = http->Get("HTTP://192.0.2.1:" + p + "/secret-get",
                std::chrono::seconds(5));  // letter case changes nothing
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("not a loopback address") != std::string::npos);

  sys::StreamRequest req;
  req.url = "http://192.0.2.1:" + p + "/secret-stream";
  std::string got;
  req.on_data = [&got](const char* d, size_t n) {
    got.append(d, n);
    return true;
  };
  const sys::StreamResult s = http->Stream(req);
  CHECK_FALSE(s.ok());
  CHECK(got.empty());
  CHECK(s.error == req.url + ": plain http is only allowed from a loopback address (connected to 192.0.2.1)");

  // The same server still answers on loopback; its log has that request and never the refused ones (a
  // request it had received would be logged before its answer, so before Get returned).
  r = http->Get("http://127.0.0.1:" + p + "/k.gpg", std::chrono::seconds(5));
  CHECK(r.ok());
  CHECK(r.body == "key");
  const std::string logged = ReadAll(log);
  INFO(logged);
  CHECK(logged.find("GET /k.gpg") != std::string::npos);
  CHECK(logged.find("/secret") == std::string::npos);
}
