// Plain http is for loopback only, decided on the address libcurl actually connected to: a server on this
// machine's own non-loopback address is refused, the same server on 127.0.0.1 is used.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "apply/harness.h"
#include "sys/http.h"
#include "sys/process.h"
#include "util/strings.h"

using namespace gp;

namespace {
// python3 -m http.server serving `dir` on addr:port; stopped (by its pid) when this goes out of scope.
class Server {
 public:
  Server(const std::string& dir, const std::string& addr, int port) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string p = std::to_string(port);
      ::execlp("python3", "python3", "-m", "http.server", "--bind", addr.c_str(), "--directory", dir.c_str(),
               p.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

 private:
  pid_t pid_ = -1;
};

sys::HttpResponse GetWithRetry(sys::HttpClient& http, const std::string& url) {
  sys::HttpResponse r;
  for (int i = 0; i < 50; ++i) {  // the server needs a moment to listen
    r = http.Get(url, std::chrono::seconds(5));
    if (r.ok() || r.error.find("not a loopback") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return r;
}
}  // namespace

TEST_CASE("curl client: plain http only to an address that is loopback as connected", "[sys]") {
  test::TempRoot root;
  root.Write("/k.gpg", "key");
  auto http = sys::MakeCurlHttpClient();
  const int port = 20000 + static_cast<int>(::getpid() % 20000);
  {
    Server s(root.path(), "127.0.0.1", port);
    auto r = GetWithRetry(*http, "http://127.0.0.1:" + std::to_string(port) + "/k.gpg");
    INFO(r.error);
    CHECK(r.ok());
    CHECK(r.body == "key");
  }
  // The refusal half (a server on a non-loopback address) runs in a private network namespace:
  // tests/sys/http_netns_test.cc, through tests/integration/http_netns.sh.
}
