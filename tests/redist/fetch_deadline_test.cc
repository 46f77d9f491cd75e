// The redistrib JSON fetch has a total deadline: a server that drips its answer (fast enough for the
// transfer's stall limit) cannot keep apply waiting.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "redist/install.h"
#include "sys/http.h"

using namespace gp;
using namespace std::chrono_literals;

namespace {
// Answers every stream with 64 bytes every 10 ms, for at most 5 s (or until the reader stops).
class DrippingHttp : public sys::HttpClient {
 public:
  sys::HttpResponse Get(const std::string&, std::chrono::milliseconds) override { return {}; }
  sys::StreamResult Stream(const sys::StreamRequest& req) override {
    sys::StreamResult r;
    const std::string piece(64, ' ');
    const auto end = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < end) {
      if (!req.on_data(piece.data(), piece.size())) {
        r.stopped = true;
        r.error = "stopped";
        return r;
      }
      r.bytes += piece.size();
      std::this_thread::sleep_for(10ms);
    }
    return r;
  }
};
}  // namespace

TEST_CASE("redist: the redistrib JSON fetch ends at its total deadline", "[redist]") {
  DrippingHttp http;
  redist::InstallOptions opt;
  opt.fetch_deadline = 300ms;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  const std::string body =
      redist::FetchSmall(http, "https://example.com/redistrib_1.json", opt, 1u << 20, error);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(body.empty());
  CHECK(error == "https://example.com/redistrib_1.json: not received within 0.3 s");
}
