// The host's /etc/gpuprep/site.yaml (under --root, the tree's) is the stack of every verb run without
// --manifest (docs/cli.md, "Which stack"): --manifest wins, stderr says when the site file is used, and
// without one the default stack is chosen as before. `manifest show` without a stack shows this machine's
// site file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "support/cli.h"
#include "util/strings.h"

using gp::test::CliOptions;
using gp::test::Gpuprep;

namespace {

const std::string kHost = std::string(GP_FIXTURES) + "/hosts/bare-nouveau";
// What stderr says, naming the site file where it is: under --root, in the tree.
std::string Said(const std::string& root) {
  return "gpuprep: using stack site-r535: the site file " + root +
         "/etc/gpuprep/site.yaml; another stack only with --manifest\n";
}

std::string Slurp(const std::string& path) {
  gp::sys::DiskFs fs("/");
  return fs.Read(path).value_or("");
}

// A copy of the bare-nouveau fixture host (links kept as links) that files can be added to.
void CopyHost(const gp::test::TempRoot& to) {
  namespace fs = std::filesystem;
  fs::copy(kHost, to.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

}  // namespace

TEST_CASE("the site file is the default manifest of every verb; --manifest overrides it", "[cli][site]") {
  gp::test::TempRoot host;  // the host checked (--root), with its site file
  CopyHost(host);
  const std::string site = Slurp(std::string(GP_FIXTURES) + "/manifests/site.yaml");
  host.Write("/etc/gpuprep/site.yaml", site);
  gp::test::TempRoot machine;  // the machine gpuprep runs on, with the same site file
  machine.Write("/etc/gpuprep/site.yaml", site);
  CliOptions o;
  o.local_root = machine.path();
  const std::string root = host.path();

  auto r = Gpuprep({"--root", root, "doctor", "--json"}, o);
  CHECK(r.code <= 1);
  CHECK(nlohmann::json::parse(r.out)["manifest"] == "site-r535");
  CHECK(gp::StartsWith(r.err, Said(root)));

  r = Gpuprep({"--root", root, "plan", "--format", "json"}, o);
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["stack"] == "site-r535");
  CHECK(r.err.find(Said(root)) != std::string::npos);

  // The script's own gpuprep calls name the stack the plan chose, the site file, pinned by its sha256: the
  // stack it runs is the one that was reviewed, even if the site file changes in between.
  r = Gpuprep({"--root", root, "plan", "--format", "sh"}, o);
  CHECK(r.out.find("# gpuprep plan for stack site-r535:") != std::string::npos);
  CHECK(r.out.find(" --manifest /etc/gpuprep/site.yaml --manifest-sha256 ") != std::string::npos);
  CHECK(r.out.find(" plan --format sh > gpuprep-plan-2.sh'") != std::string::npos);

  r = Gpuprep({"manifest", "show"}, o);
  CHECK(r.code == 0);
  CHECK(gp::StartsWith(r.out, "stack site-r535"));

  r = Gpuprep({"--root", root, "--manifest", "ubuntu22.04-r535-cuda12.2", "doctor", "--json"}, o);
  CHECK(nlohmann::json::parse(r.out)["manifest"] == "ubuntu22.04-r535-cuda12.2");
  CHECK(r.err.find("site file") == std::string::npos);

  // A broken site file is a manifest error like any other: its path, line and column, exit 2.
  host.Write("/etc/gpuprep/site.yaml", "apiVersion: gpuprep/v1\nkind: Stack\ndrivr: {}\n");
  r = Gpuprep({"--root", root, "doctor"}, o);
  CHECK(r.code == 2);
  CHECK(gp::EndsWith(
      r.err,
      "gpuprep: error: " + root +
          "/etc/gpuprep/site.yaml:3:1: unknown key \"drivr\" (did you mean \"driver\"?)\n"));  // the tree's
}

TEST_CASE("without a site file the default stack is chosen and named, as before", "[cli][site]") {
  gp::test::TempRoot machine;
  CliOptions o;
  o.local_root = machine.path();
  auto r = Gpuprep({"--root", kHost, "doctor", "--json"}, o);
  CHECK(r.err.find("site file") == std::string::npos);
  CHECK(r.err.find("gpuprep: using stack ") != std::string::npos);
  r = Gpuprep({"manifest", "show"}, o);
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: manifest show: name a stack (no --manifest and no /etc/gpuprep/site.yaml)\n");
}

TEST_CASE("under --root, a bad site file is named under the root, not as the live host's file",
          "[cli][site]") {
  gp::test::TempRoot host;
  CopyHost(host);
  host.Write("/etc/gpuprep/site.yaml", "apiVersion: gpuprep/v1\nkind: Stack\nmetadata: [\n");
  const std::string root = host.path();
  auto r = Gpuprep({"--root", root, "doctor"});
  CHECK(r.code == 2);
  INFO(r.err);
  CHECK(gp::StartsWith(r.err, "gpuprep: error: " + root + "/etc/gpuprep/site.yaml:"));
  CHECK(r.err.find(" /etc/gpuprep/site.yaml") == std::string::npos);
}
