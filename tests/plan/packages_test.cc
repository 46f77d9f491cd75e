// The planner's package state, read once: every stanza of the dpkg status file with its hold, the installed
// version (the highest of several architectures' stanzas), and gpuprep's preferences file.
#include "plan/packages.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "host/files.h"

using namespace gp;

namespace {

plan::PackageState ReadPackageState(const sys::Fs& fs) { return host::ReadRebootState(fs).packages; }

}  // namespace

TEST_CASE("package state: installed versions, holds and gpuprep's pins from one read", "[plan][packages]") {
  test::TempRoot root;
  root.Write("/var/lib/dpkg/status",
             test::DpkgStanza("nvidia-driver-535", "535.129.03-1") +
                 test::DpkgStanza("libfoo", "1.0-1", false) +
                 "Package: libfoo\nStatus: install ok installed\nArchitecture: i386\nVersion: 1.2-1\n\n" +
                 "Package: gone\nStatus: deinstall ok config-files\nVersion: 2.0-1\n\n" +
                 "Package: Bad_Name\nStatus: install ok installed\nVersion: 1.0\n\n");
  root.Write(apt::kPreferencesPath,
             apt::PreferencesContents("s", {{"nvidia-driver-535", {"535.129.03-1", {"driver"}}}}));
  const plan::PackageState s = ReadPackageState(root.fs());
  REQUIRE(s.Installed("nvidia-driver-535") != nullptr);
  CHECK(*s.Installed("nvidia-driver-535") == "535.129.03-1");
  CHECK(s.Held("nvidia-driver-535"));
  CHECK(*s.Installed("libfoo") == "1.2-1");  // the higher of the two architectures' stanzas
  CHECK_FALSE(s.Held("libfoo"));
  CHECK(s.Installed("gone") == nullptr);  // config files only
  CHECK(s.dpkg.count("gone") == 1);
  CHECK(s.Installed("Bad_Name") == nullptr);  // not a Debian package name: never reaches apt
  CHECK(s.pins.at("nvidia-driver-535").version == "535.129.03-1");
  CHECK(s.preferences.rfind("# gpuprep:", 0) == 0);
}

TEST_CASE("package decision: kept at the pin, resolved, or left to apply time", "[plan][packages]") {
  test::TempRoot root;
  root.Write("/var/lib/dpkg/status", test::DpkgStanza("liba", "1.0-1", false));
  const plan::PackageState s = ReadPackageState(root.fs());
  plan::PackageContext ctx{&s, nullptr, ""};
  manifest::AptPackage a, b;
  a.name = "liba";
  a.version = "1.0-1";
  b.name = "libb";
  b.upstream = "2.0";
  const plan::PackageDecision d = plan::DecidePackages(ctx, "cuda", {a, b}, "2.0");
  CHECK(d.detail == "missing: libb 2.0; not held: liba");
  CHECK(d.install == std::vector<std::string>{"libb=2.0-*"});
  REQUIRE(d.roots.size() == 1);
  CHECK(d.roots[0].name == "liba");
  CHECK(d.needs_index);
  CHECK(d.error.empty());
}
