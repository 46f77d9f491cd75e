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

TEST_CASE("curl client: Send refuses a header that is not one line, and limits the body", "[sys]") {
  test::TempRoot root;
  root.Write("/manifest.json", std::string(2048, 'x'));
  auto http = sys::MakeCurlHttpClient();
  sys::HttpRequest req;
  req.url = "file://" + root.path() + "/manifest.json";
  req.headers = {"Accept: application/json\r\nAuthorization: Bearer stolen"};
  auto r = http->Send(req);
  CHECK(r.error == "a request header is not one \"Name: value\" line; nothing was sent");
  req.headers = {"Accept: application/json"};
  r = http->Send(req);
  INFO(r.error);
  CHECK(r.ok());
  CHECK(r.body.size() == 2048);
  req.max_body = 1024;
  r = http->Send(req);
  CHECK(r.error == "response larger than 1 KiB");
  CHECK(r.body.empty());
}

TEST_CASE("HttpClient::Send: a client that only answers Get refuses request headers", "[sys]") {
  struct GetOnly : sys::HttpClient {
    sys::HttpResponse Get(const std::string& url, std::chrono::milliseconds) override {
      return {200, url, ""};
    }
  } client;
  sys::HttpRequest req;
  req.url = "https://example.invalid/x";
  CHECK(client.Send(req).body == "https://example.invalid/x");
  req.headers = {"Accept: */*"};
  CHECK(client.Send(req).error == "this HTTP client cannot send request headers");
}
