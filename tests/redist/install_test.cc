// The streaming install (redist/install.h) end to end with the real seams: libcurl against a loopback
// HTTPS server (tests/redist/redist_server.py, byte ranges, dropped connections), libcrypto, libarchive,
// real .tar.xz archives in NVIDIA's layout built by tests/redist/make_redist.py, a temp dir as "/".
#include "redist/install.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "redist/loopback.h"
#include "redist/requests.h"
#include "redist/state.h"
#include "sys/http.h"
#include "util/strings.h"

using namespace gp;

namespace {

redist::Request Req(const std::string& base, const std::string& version = "9.12.0.46") {
  return test::CudnnRequest(base, version);
}
redist::InstallOptions Opts(const std::string& ca) { return test::FastRetries(ca); }
std::string Listing(test::TempRoot& root) { return test::CudnnListing(root); }

// A fresh work dir beside the root for the server's files and the archives.
struct Work {
  test::TempRoot root;  // the host's "/"
  test::TempRoot aux;   // the server's tree and certificate
  std::string www() { return aux.path() + "/www"; }
};

}  // namespace

TEST_CASE("redist install: a real .tar.xz from loopback HTTPS lands in a versioned prefix, switched in",
          "[redist]") {
  Work w;
  test::MakeRedist(w.www(), "good");
  test::LoopbackServer server(w.aux.path(), w.www());
  auto http = sys::MakeCurlHttpClient();
  auto req = Req(server.Url());
  CHECK(req.json_url == server.Url("redistrib_9.12.0.json"));
  CHECK(req.prefix == "/opt/gpuprep/cudnn/9.12.0.46-cuda12");
  CHECK_FALSE(redist::Inspect(w.root.fs(), req).installed);

  // What a killed earlier run left behind: a hidden staging tree, removed by the next install.
  w.root.Write("/opt/gpuprep/cudnn/.9.12.0.46-cuda12.partial.Ab12Cd/lib/half.so", "half");
  auto r = redist::Install(req, w.root.fs(), *http, Opts(server.ca()));
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.previous.empty());
  CHECK(r.resumes == 0);
  CHECK(Listing(w.root) == "9.12.0.46-cuda12 current");
  CHECK(w.root.fs().ReadLink("/opt/gpuprep/cudnn/current") == std::optional<std::string>("9.12.0.46-cuda12"));
  CHECK(w.root.Read("/opt/gpuprep/cudnn/current/include/cudnn_version.h").find("#define CUDNN_MINOR 12") !=
        std::string::npos);
  CHECK(w.root.fs().ReadLink("/opt/gpuprep/cudnn/9.12.0.46-cuda12/lib/libcudnn.so.9") ==
        std::optional<std::string>("libcudnn.so.9.12.0.46"));
  CHECK(w.root.Exists("/opt/gpuprep/cudnn/current/lib/libcudnn.so"));
  CHECK(w.root.Read("/etc/ld.so.conf.d/gpuprep-cudnn.conf") ==
        "# gpuprep: NVIDIA redistributable install "
        "(/opt/gpuprep/cudnn/current)\n/opt/gpuprep/cudnn/current/lib\n");
  auto st = redist::Inspect(w.root.fs(), req);
  CHECK(st.installed);
  CHECK(st.detail == "installed in /opt/gpuprep/cudnn/9.12.0.46-cuda12 (/opt/gpuprep/cudnn/current)");

  SECTION("a newer version switches current and keeps the previous one") {
    test::MakeRedist(w.www(), "good", "9.12.1.2");
    auto r2 = redist::Install(Req(server.Url(), "9.12.1.2"), w.root.fs(), *http, Opts(server.ca()));
    INFO(r2.error);
    REQUIRE(r2.ok());
    CHECK(r2.previous == "9.12.0.46-cuda12");
    CHECK(Listing(w.root) == "9.12.0.46-cuda12 9.12.1.2-cuda12 current");
    CHECK(w.root.fs().ReadLink("/opt/gpuprep/cudnn/current") ==
          std::optional<std::string>("9.12.1.2-cuda12"));
    CHECK_FALSE(redist::Inspect(w.root.fs(), req).installed);  // the old pin is no longer current
  }
}

TEST_CASE("redist install: a refused download leaves nothing visible and current untouched", "[redist]") {
  Work w;
  test::MakeRedist(w.www(), "good", "9.12.0.1");  // an earlier install to keep
  test::LoopbackServer server(w.aux.path(), w.www());
  auto http = sys::MakeCurlHttpClient();
  REQUIRE(redist::Install(Req(server.Url(), "9.12.0.1"), w.root.fs(), *http, Opts(server.ca())).ok());
  const std::string before = Listing(w.root);
  REQUIRE(before == "9.12.0.1-cuda12 current");
  const std::string conf = w.root.Read("/etc/ld.so.conf.d/gpuprep-cudnn.conf");
  const std::string url = server.Url("cudnn/linux-x86_64/cudnn-linux-x86_64-9.12.0.46_cuda12-archive.tar.xz");

  // One server and one earlier install for every case below, each in turn (not Catch2 sections, which
  // would start both again per case): each case leaves the host as it was, which it checks.
  auto attempt = [&](const std::string& variant) {
    test::MakeRedist(w.www(), variant);
    return redist::Install(Req(server.Url()), w.root.fs(), *http, Opts(server.ca()));
  };
  auto unchanged = [&] {
    CHECK(Listing(w.root) == before);
    CHECK(w.root.fs().ReadLink("/opt/gpuprep/cudnn/current") ==
          std::optional<std::string>("9.12.0.1-cuda12"));
    CHECK(w.root.Read("/etc/ld.so.conf.d/gpuprep-cudnn.conf") == conf);
    CHECK_FALSE(w.root.Exists("/opt/gpuprep/gpuprep-redist-evil"));
    CHECK_FALSE(w.root.Exists("/opt/gpuprep-redist-evil"));
    CHECK_FALSE(w.root.Exists("/gpuprep-redist-evil"));
    CHECK(::access("/tmp/gpuprep-redist-evil", F_OK) != 0);
  };
  const std::string top = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive";

  {
    INFO("wrong sha256 in the index");
    test::MakeRedist(w.www(), "good");
    std::string json = test::Slurp(w.www() + "/redistrib_9.12.0.json");
    auto at = json.find("\"sha256\": \"") + 11;
    json.replace(at, 64, std::string(64, 'a'));
    std::ofstream(w.www() + "/redistrib_9.12.0.json") << json;
    auto r = redist::Install(Req(server.Url()), w.root.fs(), *http, Opts(server.ca()));
    CHECK(r.error.rfind(url + ": sha256 mismatch: downloaded ", 0) == 0);
    CHECK(r.error.find(", the redistrib JSON gives " + std::string(64, 'a') + "; nothing was installed") !=
          std::string::npos);
    unchanged();
  }
  {
    INFO("an archive changed after the index was written");
    auto r = attempt("tamper");
    CHECK(r.error.rfind(url + ": ", 0) == 0);
    CHECK(r.error.find("; nothing was installed") != std::string::npos);
    unchanged();
  }
  {
    INFO("a download shorter than the index says");
    auto r = attempt("short");
    CHECK(r.error.find(url + ": truncated: ") == 0);
    unchanged();
  }
  {
    INFO("path traversal");
    auto r = attempt("traversal");
    CHECK(r.error ==
          url + ": archive entry \"" + top +
              "/../../gpuprep-redist-evil\": \"..\" climbs out of the prefix; nothing was installed");
    unchanged();
  }
  {
    INFO("an absolute path");
    auto r = attempt("absolute");
    CHECK(r.error ==
          url + ": archive entry \"/tmp/gpuprep-redist-evil\": absolute path; nothing was installed");
    unchanged();
  }
  {
    INFO("a symlink that escapes, then a file written through it");
    auto r = attempt("symlink-escape");
    CHECK(r.error == url + ": archive entry \"" + top +
                         "/lib/escape\": symlink to \"../../../../../../../../tmp\" leaves the prefix; "
                         "nothing was installed");
    unchanged();
  }
  {
    INFO("a symlink that escapes only through another link");
    auto r = attempt("link-climb");
    CHECK(r.error == url + ": archive entry \"" + top +
                         "/lib/up\": symlink to \"s/../../../gpuprep-redist-evil\" climbs after a name; "
                         "nothing was installed");
    unchanged();
  }
  {
    INFO("a hard link to a host file");
    auto r = attempt("hardlink");
    CHECK(r.error ==
          url + ": archive entry \"" + top +
              "/lib/hard\": hard link to \"/etc/passwd\" leaves the prefix; nothing was installed");
    unchanged();
  }
  {
    INFO("a hard link to an in-prefix symbolic link whose \"..\" climbs out from the hard link's place");
    auto r = attempt("hardlink-symlink");
    CHECK(r.error == url + ": archive entry \"" + top + "/include2\": hard link to \"" + top +
                         "/lib/a/b/c/d/e/f/g/h/up\", a symbolic link (a hard link must name a regular file); "
                         "nothing was installed");
    unchanged();
  }
  {
    INFO("a decompression bomb: ~500 KB that unpack to 2 GiB, the index right about it");
    test::MakeRedist(w.www(), "bomb");
    const std::string json = test::Slurp(w.www() + "/redistrib_9.12.0.json");
    const uint64_t size = std::stoull(json.substr(json.find("\"size\": \"") + 9));
    REQUIRE(size < (1u << 20));
    auto r = redist::Install(Req(server.Url()), w.root.fs(), *http, Opts(server.ca()));
    const uint64_t cap = redist::kUnpackRatio * size;
    CHECK(r.error.rfind(url + ": refused: it unpacks to more than " + std::to_string(cap) +
                            " bytes of file data (\"" + top + "/lib/zeros",
                        0) == 0);
    CHECK(r.error.find(", and 32 times the archive's " + std::to_string(size) +
                       " bytes is the most accepted (a decompression bomb?); nothing was installed") !=
          std::string::npos);
    CHECK(r.unpacked <= cap);  // refused before the first byte over the limit
    CHECK(r.unpacked > cap / 2);
    unchanged();
  }
  {
    INFO("a device file");
    auto r = attempt("device");
    CHECK(r.error == url + ": archive entry \"" + top +
                         "/lib/nvidia0\": a device, FIFO or socket; nothing was installed");
    unchanged();
  }
  {
    INFO("an index whose version is not the stack's");
    test::MakeRedist(w.www(), "good", "9.11.0.98");
    auto r = redist::Install(Req(server.Url()), w.root.fs(), *http, Opts(server.ca()));
    CHECK(r.error == server.Url("redistrib_9.12.0.json") +
                         ": cudnn is 9.11.0.98, the stack pins 9.12.0.46; nothing was installed");
    unchanged();
  }
  {
    INFO("a pinned index that does not match its pin");
    test::MakeRedist(w.www(), "good");
    auto req = Req(server.Url());
    req.json_sha256 = std::string(64, '0');
    auto r = redist::Install(req, w.root.fs(), *http, Opts(server.ca()));
    CHECK(r.error.find(": sha256 mismatch: downloaded ") != std::string::npos);
    CHECK(r.error.find("the stack pins " + std::string(64, '0') + "; nothing was installed") !=
          std::string::npos);
    unchanged();
  }
  {
    INFO("TLS is verified: the loopback certificate is not in the system's store");
    test::MakeRedist(w.www(), "good");
    auto r = redist::Install(Req(server.Url()), w.root.fs(), *http, Opts(""));
    CHECK(r.error.rfind("cannot download " + server.Url("redistrib_9.12.0.json") + ": ", 0) == 0);
    unchanged();
  }
}

TEST_CASE("redist install: the unpack limit is the ratio, or the free space less what stays free",
          "[redist]") {
  using redist::UnpackLimitFor;
  const uint64_t gib = 1ull << 30;
  CHECK(UnpackLimitFor(1000, std::nullopt).bytes == 32000);
  CHECK_FALSE(UnpackLimitFor(1000, std::nullopt).by_space);
  CHECK(UnpackLimitFor(1000, 100 * gib).bytes == 32000);
  CHECK(UnpackLimitFor(gib, 10 * gib).bytes == 9 * gib);  // 32 GiB by the ratio; 10 GiB free less 1 GiB
  CHECK(UnpackLimitFor(gib, 10 * gib).by_space);
  CHECK(UnpackLimitFor(1000, gib / 2).bytes == 0);  // less free than is kept free: no file data at all
  CHECK(UnpackLimitFor(UINT64_MAX / 2, std::nullopt).bytes == UINT64_MAX);
}

TEST_CASE("redist install: a connection dropped mid-transfer is resumed with a range request", "[redist]") {
  Work w;
  test::MakeRedist(w.www(), "good", "9.12.0.46", {"--pad-mb", "3"});
  const std::string name = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive.tar.xz";
  test::LoopbackServer server(w.aux.path(), w.www(), {"--drop", name + ":1000000"});
  auto http = sys::MakeCurlHttpClient();
  std::vector<std::chrono::milliseconds> sleeps;
  auto opt = Opts(server.ca());
  opt.sleep = [&](std::chrono::milliseconds d) { sleeps.push_back(d); };
  auto r = redist::Install(Req(server.Url()), w.root.fs(), *http, opt);
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.resumes == 1);
  CHECK(sleeps == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(1)});
  const std::string log = server.Log();
  INFO(log);
  CHECK(log.find(name + " 200 0-") != std::string::npos);
  CHECK(log.find(" 1000000 dropped") != std::string::npos);
  CHECK(log.find(name + " 206 1000000-") != std::string::npos);  // resumed where it stopped, not restarted
  CHECK(Listing(w.root) == "9.12.0.46-cuda12 current");
  CHECK(w.root.Exists("/opt/gpuprep/cudnn/current/lib/libcudnn_part0.so.9.12.0.46"));
}

TEST_CASE("redist install: an air-gapped host reads a local directory", "[redist]") {
  Work w;
  test::MakeRedist(w.www(), "good");
  auto http = sys::MakeCurlHttpClient();
  auto req = Req(w.www());
  CHECK(req.json_url == "file://" + w.www() + "/redistrib_9.12.0.json");
  auto r = redist::Install(req, w.root.fs(), *http, Opts(""));
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(Listing(w.root) == "9.12.0.46-cuda12 current");
  CHECK(redist::Inspect(w.root.fs(), req).installed);
  SECTION("a missing directory fails cleanly") {
    auto r2 = redist::Install(Req(w.aux.path() + "/nowhere", "9.12.0.46"), w.root.fs(), *http, Opts(""));
    CHECK(r2.error.rfind("cannot download file://" + w.aux.path() + "/nowhere/redistrib_9.12.0.json: ", 0) ==
          0);
  }
}
