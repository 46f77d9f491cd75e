// The real libcurl client (dlopen'ed) against file:// URLs: body, missing files, and the size of the body.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "sys/http.h"

using namespace gp;

TEST_CASE("curl client: file:// downloads, and a clear error for a missing file", "[apply]") {
  test::TempRoot root;
  root.Write("/key.gpg", std::string("\x99\x01\x0d\x00binary", 10));
  auto http = sys::MakeCurlHttpClient();
  REQUIRE(http);
  auto r = http->Get("file://" + root.path() + "/key.gpg", std::chrono::seconds(5));
  INFO(r.error);
  CHECK(r.ok());
  CHECK(r.body == std::string("\x99\x01\x0d\x00binary", 10));
  r = http->Get("file://" + root.path() + "/missing.gpg", std::chrono::seconds(5));
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.error.empty());
  r = http->Get("gopher://127.0.0.1/x", std::chrono::seconds(5));
  CHECK_FALSE(r.ok());
}
