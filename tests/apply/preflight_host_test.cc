// apply/preflight.h FetchKernelPackageAnswers: the host's own apt sources, fetched by the real apt-get into
// a private lists directory, asked for the running kernel's headers. The sources are local archives read
// with apt's copy: method (no network; file: would link the lists to paths outside the test's root). The
// host's lists are untouched and the private directory is removed. apt-get is part of every host gpuprep
// supports, so the test needs it.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apply/preflight.h"
#include "layers/table.h"
#include "sys/process.h"

using namespace gp;
using apt::Availability;

namespace {

struct PreflightHost {
  test::TempRoot root;
  sys::RealCommandRunner runner;
  apply::ExecEnv env;
  PreflightHost() {
    env.verify = layers::VerifyLayer;
    // mkdtemp's 0700 would keep apt's unprivileged downloader (_apt) out, as no real / does.
    ::chmod(root.path().c_str(), 0755);
    env.fs = &root.fs();
    env.runner = &runner;
  }
  // A flat archive at /srv/NAME publishing `packages` (each "name=version"), in the host's sources.list.
  void Archive(const std::string& name, const std::vector<std::string>& packages) {
    std::string text;
    for (const auto& p : packages) {
      const auto eq = p.find('=');
      text += "Package: " + p.substr(0, eq) + "\nVersion: " + p.substr(eq + 1) +
              "\nArchitecture: amd64\nFilename: ./" + p.substr(0, eq) +
              ".deb\nSize: 1\nDescription: test\n\n";
    }
    root.Write("/srv/" + name + "/Packages", text);
    Source("deb [trusted=yes] copy:" + root.path() + "/srv/" + name + " ./");
  }
  void Source(const std::string& line) {
    sources += line + "\n";
    root.Write("/etc/apt/sources.list", sources);
  }
  apt::ListsAnswer Ask(const std::string& package) {
    return apply::FetchKernelPackageAnswers({package}, env).at(package);
  }
  std::string sources;
};

}  // namespace

TEST_CASE("the host's own sources, fetched privately, say whether the kernel headers can be installed",
          "[apply][preflight]") {
  PreflightHost h;
  h.Archive("jammy", {"linux-headers-5.15.0-25-generic=5.15.0-25.25", "bash=5.1-6ubuntu1"});
  h.Archive("jammy-updates", {"linux-headers-5.15.0-126-generic=5.15.0-126.136"});
  h.root.Write("/var/lib/apt/lists/host-list_Packages", "Package: linux-headers-5.15.0-105-generic\n\n");
  h.root.Write("/etc/apt/sources.list.d/other.list",
               "deb [trusted=yes] copy:" + h.root.path() + "/srv/jammy-updates ./\n");

  auto a = h.Ask("linux-headers-5.15.0-126-generic");
  CHECK(a.state == Availability::kAvailable);
  CHECK(a.from == "the index of this host's apt sources, fetched just now");
  // The host's lists say 105 is there; its sources no longer publish it.
  CHECK(h.Ask("linux-headers-5.15.0-105-generic").state == Availability::kMissing);
  CHECK(h.Ask("linux-headers-6.18.44-fc-v657-gpu").state == Availability::kMissing);
  // Nothing of the host's changed; nothing of the private fetch is left.
  CHECK(h.root.Read("/var/lib/apt/lists/host-list_Packages") ==
        "Package: linux-headers-5.15.0-105-generic\n\n");
  CHECK(h.root.fs().List("/var/lib/apt/lists") == std::vector<std::string>{"host-list_Packages"});
  CHECK_FALSE(h.root.Exists(apply::kPreflightHostDir));
  CHECK_FALSE(h.root.Exists("/var/cache/apt/pkgcache.bin"));
}

TEST_CASE("a source apt cannot fetch turns 'missing' into 'unknown'", "[apply][preflight]") {
  PreflightHost h;
  h.Archive("jammy", {"linux-headers-5.15.0-25-generic=5.15.0-25.25"});
  h.Source("deb [trusted=yes] copy:" + h.root.path() + "/srv/gone ./");
  // The answer it found still counts; the one it did not find might be in the source that failed.
  CHECK(h.Ask("linux-headers-5.15.0-25-generic").state == Availability::kAvailable);
  CHECK(h.Ask("linux-headers-5.15.0-126-generic").state == Availability::kUnknown);
  CHECK_FALSE(h.root.Exists(apply::kPreflightHostDir));
}

TEST_CASE("a host without distribution sources gives no answer", "[apply][preflight]") {
  PreflightHost h;
  h.Archive("cuda", {"cuda-drivers=580.95.05-1"});
  CHECK(h.Ask("linux-headers-5.15.0-126-generic").state == Availability::kUnknown);
}
