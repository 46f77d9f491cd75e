// Plain http is for loopback only, decided on the address libcurl actually connected to: a server on
// 127.0.0.1 is used (the refusal half runs in a private network namespace, http_netns_test.cc).
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "apply/harness.h"
#include "sys/http.h"
#include "sys/python_http_server.h"

using namespace gp;

TEST_CASE("curl client: plain http only to an address that is loopback as connected", "[sys]") {
  test::TempRoot root;
  root.Write("/k.gpg", "key");
  auto http = sys::MakeCurlHttpClient();
  {
    test::PythonHttpServer s(root.path(), "127.0.0.1");  // listening once constructed
    auto r = http->Get("http://127.0.0.1:" + std::to_string(s.port()) + "/k.gpg", std::chrono::seconds(5));
    INFO(r.error);
    CHECK(r.ok());
    CHECK(r.body == "key");
  }
  // The refusal half (a server on a non-loopback address) runs in a private network namespace:
  // tests/sys/http_netns_test.cc, through tests/integration/http_netns.sh.
}
