// Switching versions (redist/install.h): a reinstall of the version in use is exchanged in one rename, so
// `current` never dangles; every other version (the one `current` pointed at before, older ones) stays; and
// the durability helpers (sys/writeback.h) the install relies on.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "apply/harness.h"
#include "redist/install.h"
#include "redist/loopback.h"
#include "redist/requests.h"
#include "sys/http.h"
#include "sys/writeback.h"
#include "util/strings.h"

using namespace gp;

TEST_CASE("redist switch: reinstalling the version in use never leaves current dangling", "[redist]") {
  test::TempRoot root, aux;
  const std::string www = aux.path() + "/www";
  test::MakeRedist(www, "good", "9.12.0.46", {"--pad-mb", "2"});
  auto http = sys::MakeCurlHttpClient();
  auto req = test::CudnnRequest(www, "9.12.0.46");
  REQUIRE(redist::Install(req, root.fs(), *http, test::FastRetries("")).ok());
  // A file only the old tree has: gone after the reinstall, proving the tree was replaced.
  root.Write("/opt/gpuprep/cudnn/9.12.0.46-cuda12/lib/stale.so", "old");

  // A reader resolving current/lib/... over and over while the same version is installed again.
  const std::string probe = root.fs().HostPath("/opt/gpuprep/cudnn/current/include/cudnn_version.h");
  std::atomic<bool> stop{false};
  std::atomic<long> looks{0}, misses{0};
  std::thread watcher([&] {
    while (!stop) {
      struct stat st {};
      if (::stat(probe.c_str(), &st) != 0) ++misses;
      ++looks;
    }
  });
  auto r = redist::Install(req, root.fs(), *http, test::FastRetries(""));
  stop = true;
  watcher.join();
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(r.previous == "9.12.0.46-cuda12");
  CHECK(looks > 0);
  CHECK(misses == 0);
  CHECK_FALSE(root.Exists("/opt/gpuprep/cudnn/9.12.0.46-cuda12/lib/stale.so"));
  CHECK(root.Exists("/opt/gpuprep/cudnn/current/lib/libcudnn_part0.so.9.12.0.46"));
  CHECK(test::CudnnListing(root) == "9.12.0.46-cuda12 current");  // no staging or old tree left behind
}

TEST_CASE("redist switch: versions stay side by side, nothing else touched", "[redist]") {
  test::TempRoot root, aux;
  const std::string www = aux.path() + "/www";
  auto http = sys::MakeCurlHttpClient();
  auto install = [&](const std::string& v) {
    test::MakeRedist(www, "good", v);
    auto r = redist::Install(test::CudnnRequest(www, v), root.fs(), *http, test::FastRetries(""));
    INFO(r.error);
    REQUIRE(r.ok());
    return r;
  };
  install("9.12.0.1");
  // Trees gpuprep did not make, and a link, are left alone too.
  root.Write("/opt/gpuprep/cudnn/team-a/lib/keep.so", "x");
  root.Write("/opt/gpuprep/cudnn/9.12-custom/lib/keep.so", "x");
  root.Symlink("9.12.0.1-cuda12", "/opt/gpuprep/cudnn/9.12.0.0-cuda12");

  auto r2 = install("9.12.0.46");
  CHECK(r2.previous == "9.12.0.1-cuda12");
  CHECK(test::CudnnListing(root) ==
        "9.12-custom 9.12.0.0-cuda12 9.12.0.1-cuda12 9.12.0.46-cuda12 current team-a");

  auto r3 = install("9.12.1.2");
  CHECK(r3.previous == "9.12.0.46-cuda12");
  CHECK(test::CudnnListing(root) ==
        "9.12-custom 9.12.0.0-cuda12 9.12.0.1-cuda12 9.12.0.46-cuda12 9.12.1.2-cuda12 current team-a");
  CHECK(root.Exists("/opt/gpuprep/cudnn/9.12.0.1-cuda12/lib/libcudnn.so.9.12.0.1"));
  CHECK(root.fs().ReadLink("/opt/gpuprep/cudnn/current") == std::optional<std::string>("9.12.1.2-cuda12"));
  CHECK(root.Exists("/opt/gpuprep/cudnn/9.12.0.46-cuda12/lib/libcudnn.so.9.12.0.46"));

  SECTION("going back to an earlier version switches `current` and keeps the others") {
    auto r4 = install("9.12.0.46");
    CHECK(r4.previous == "9.12.1.2-cuda12");
    CHECK(root.Exists("/opt/gpuprep/cudnn/9.12.1.2-cuda12/lib/libcudnn.so.9.12.1.2"));
    CHECK(root.fs().ReadLink("/opt/gpuprep/cudnn/current") == std::optional<std::string>("9.12.0.46-cuda12"));
  }
}

TEST_CASE("sync tree: every file and directory fsynced, links and FIFOs skipped, errors named", "[redist]") {
  test::TempRoot t;
  t.Write("/tree/lib/a.so", "a");
  t.Write("/tree/include/b.h", "b");
  t.Symlink("a.so", "/tree/lib/a.so.1");
  t.Symlink("/nowhere", "/tree/lib/dangling");
  REQUIRE(::mkfifo(t.fs().HostPath("/tree/lib/fifo").c_str(), 0600) == 0);  // opening it would block
  CHECK(sys::SyncTree(t.fs().HostPath("/tree")).ok);
  auto missing = sys::SyncTree(t.fs().HostPath("/absent"));
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.find(t.fs().HostPath("/absent")) != std::string::npos);
}

TEST_CASE("writeback: kicks are issued in the background and drained, missing files ignored", "[redist]") {
  test::TempRoot t;
  t.Write("/f", std::string(1 << 20, 'x'));
  sys::Writeback wb;
  wb.Kick(t.fs().HostPath("/f"));
  wb.Kick(t.fs().HostPath("/f"));
  wb.Kick(t.fs().HostPath("/missing"));
  wb.Drain();
  wb.Drain();  // idle: returns at once
  CHECK(t.Read("/f").size() == 1u << 20);
}

TEST_CASE("redist install: download progress in whole percents, ending at the archive's size", "[redist]") {
  test::TempRoot root, aux;
  const std::string www = aux.path() + "/www";
  test::MakeRedist(www, "good", "9.12.0.46", {"--pad-mb", "2"});
  auto http = sys::MakeCurlHttpClient();
  auto opt = test::FastRetries("");
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  std::string name;
  opt.bytes = [&](const std::string& n, uint64_t done, uint64_t total) {
    name = n;
    seen.emplace_back(done, total);
  };
  auto r = redist::Install(test::CudnnRequest(www, "9.12.0.46"), root.fs(), *http, opt);
  INFO(r.error);
  REQUIRE(r.ok());
  CHECK(name == "cudnn-linux-x86_64-9.12.0.46_cuda12-archive.tar.xz");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.size() <= 101);
  CHECK(seen.back().first == r.bytes);
  CHECK(seen.back().second == r.bytes);
  for (size_t i = 1; i < seen.size(); ++i)
    CHECK(seen[i].first * 100 / seen[i].second > seen[i - 1].first * 100 / seen[i - 1].second);
}
