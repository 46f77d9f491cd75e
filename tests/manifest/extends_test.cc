// `extends:` — deep merge, list replacement, origins per file, relative paths, cycles, missing targets.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"
#include "sys/fs.h"
#include "util/strings.h"

using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {
const std::string kFixtureManifests = std::string(GP_FIXTURES) + "/manifests/";
const std::string kBase = "manifests/stacks/ubuntu22.04-r535-cuda12.2.yaml";
}  // namespace

TEST_CASE("a site file overrides an embedded stack; origins name each file", "[manifest]") {
  gp::sys::DiskFs fs("/");
  m::Stack s = m::LoadStack(kFixtureManifests + "site.yaml", m::LoadContext{&fs, nullptr});
  CHECK(s.name == "site-r535");
  CHECK(s.description.empty());  // metadata is the site file's own, not inherited
  CHECK(s.source == kFixtureManifests + "site.yaml");
  CHECK(s.extends_chain == std::vector<std::string>{"ubuntu22.04-r535-cuda12.2"});
  // overridden in the site file
  CHECK(s.driver.version.version->str() == "535.183.01");
  CHECK(s.origins.at("driver.version") == kFixtureManifests + "site.yaml:8:12");
  REQUIRE(s.driver.packages.size() == 1);
  CHECK(s.driver.packages[0].name == "cuda-drivers-535");  // lists replace, never append
  CHECK(s.driver.fabricmanager_packages.empty());
  CHECK(s.workload.min_cpus_per_gpu == 12);
  CHECK(s.origins.at("workload.min_cpus_per_gpu") == kFixtureManifests + "site.yaml:13:21");
  // kept from the embedded stack (deep merge: sibling keys of an overridden map survive)
  CHECK(s.driver.branch == 535);
  CHECK(gp::StartsWith(s.origins.at("driver.branch"), kBase + ":"));
  CHECK(s.workload.profile == "llm-finetune");
  CHECK(gp::StartsWith(s.origins.at("workload.profile"), kBase + ":"));
  CHECK(s.cudnn.version.version->str() == "8.9.7.29");
  CHECK(s.image.ref == "nvcr.io/nvidia/pytorch:23.10-py3");
}

TEST_CASE("extends chains resolve relative paths beside the child", "[manifest]") {
  gp::sys::DiskFs fs("/");
  m::Stack s = m::LoadStack(kFixtureManifests + "site-child.yaml", m::LoadContext{&fs, nullptr});
  CHECK(s.name == "site-child");
  CHECK(s.extends_chain == std::vector<std::string>{"ubuntu22.04-r535-cuda12.2", "site.yaml"});
  CHECK(s.architectures == std::vector<std::string>{"hopper"});
  CHECK(s.origins.at("architectures") == kFixtureManifests + "site-child.yaml:6:16");
  CHECK(s.driver.version.version->str() == "535.183.01");
  CHECK(s.origins.at("driver.version") == kFixtureManifests + "site.yaml:8:12");
}

TEST_CASE("extends errors", "[manifest]") {
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  CHECK(ErrorOf([&] { m::LoadStack(kFixtureManifests + "cycle-a.yaml", ctx); }) ==
        "2 " + kFixtureManifests + "cycle-b.yaml:3:10: extends cycle: " + kFixtureManifests +
            "cycle-a.yaml -> " + kFixtureManifests + "cycle-b.yaml -> " + kFixtureManifests + "cycle-a.yaml");
  CHECK(ErrorOf([&] { m::LoadStack(kFixtureManifests + "extends-missing.yaml", ctx); }) ==
        "2 " + kFixtureManifests +
            "extends-missing.yaml:3:10: extends \"ubuntu22.04-r535-cuda12\": no embedded stack or file of "
            "that name "
            "(did you mean \"ubuntu22.04-r535-cuda12.2\"?)");
  CHECK(ErrorOf([&] { m::LoadStack(kFixtureManifests + "broken-unknown-key.yaml", ctx); }) ==
        "2 " + kFixtureManifests +
            "broken-unknown-key.yaml:6:1: unknown key \"drivr\" (did you mean \"driver\"?)");
  CHECK(ErrorOf([&] { m::LoadStack(kFixtureManifests + "broken-version.yaml", ctx); }) ==
        "2 " + kFixtureManifests + "broken-version.yaml:7:12: \"535.x\" is not a version");
  CHECK(
      ErrorOf([&] { m::LoadStack(kFixtureManifests + "toolkit-advisory.yaml", ctx); }) ==
      "2 " + kFixtureManifests +
          "toolkit-advisory.yaml:7:12: container toolkit 1.16.1 is affected by CVE-2024-0132, CVE-2024-0133 "
          "(fixed in 1.16.2)");
  // Outside the stack's directory: refused before it is read (file_refs_test.cc has the whole rule).
  const std::string up = ErrorOf(
      [&] { m::ParseStack("apiVersion: gpuprep/v1\nkind: Stack\nextends: ../x.yaml\n", "s.yaml", ctx); });
  CHECK(gp::StartsWith(up, "2 s.yaml:3:10: extends \"../x.yaml\": leads to /"));
  CHECK(gp::EndsWith(up, "/ (the directory of the file that names it) and /etc/gpuprep/"));
  CHECK(ErrorOf([&] {
          m::ParseStack("apiVersion: gpuprep/v1\nkind: Stack\nextends: x.yaml\n", "s.yaml", ctx);
        }) == "2 s.yaml:3:10: extends \"x.yaml\": cannot read x.yaml: no such file");
  CHECK(ErrorOf([&] { m::LoadStack("no-such-stack", ctx); }) ==
        "2 no embedded stack or file named \"no-such-stack\" (embedded stacks: blackwell-r580-cuda13.0, "
        "blackwell-r580.173.02-cuda13.0.3, blackwell-r580.173.02-cuda13.0.3-nvlsm, "
        "blackwell-r595.91.07-cuda13.2.2, blackwell-r595.91.07-cuda13.2.2-nvlsm, hopper-r580-cuda13.0, "
        "hopper-r580.173.02-cuda13.0.3, hopper-r595.91.07-cuda13.2.2, "
        "ubuntu22.04-r535-cuda12.2, volta-r580-cuda12.9, volta-r580.173.02-cuda12.9.1)");
  CHECK(ErrorOf([&] { m::LoadStack("hoper-r580-cuda13.0", ctx); }) ==
        "2 no embedded stack or file named \"hoper-r580-cuda13.0\" (did you mean \"hopper-r580-cuda13.0\"?)");
  CHECK(ErrorOf([&] { m::LoadStack(kFixtureManifests + "nope.yaml", ctx); }) ==
        "2 cannot read " + kFixtureManifests + "nope.yaml: no such file");
  CHECK(ErrorOf([&] { m::LoadStack("https://example.com/s.yaml", ctx); }) ==
        "2 cannot fetch https://example.com/s.yaml: no HTTP client here");
  CHECK(ErrorOf([&] { m::LoadStack("http://example.com/s.yaml", ctx); }) ==
        "2 plain http is accepted only for loopback addresses: use https://");
}

TEST_CASE("repository_overrides: address and key only, validated like the stack's own", "[manifest]") {
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  const gp::test::TempDir tmp;
  const std::string dir = tmp.path;
  auto site = [&](const std::string& body) {
    const std::string path = dir + "/site.yaml";
    fs.WriteAtomic(
        path,
        std::string("apiVersion: gpuprep/v1\nkind: Stack\nextends: hopper-r580-cuda13.0\nmetadata:\n"
                    "  name: site\nrepository_overrides:\n") +
            body,
        0644, false);
    return path;
  };
  // A plain-http mirror is fine for apt (it verifies against the pinned key); the key stays the stack's.
  m::Stack s = m::LoadStack(site("  cuda:\n    url: http://mirror.example.internal/cuda/\n"), ctx);
  for (const auto& r : s.repositories)
    if (r.name == "cuda") {
      CHECK(r.url == "http://mirror.example.internal/cuda/");
      CHECK(r.key_fingerprint == "EB693B3035CD5710E231E123A4B469963BF863CC");
    }
  const std::string path = dir + "/site.yaml";
  CHECK(ErrorOf([&] { m::LoadStack(site("  cdua:\n    url: http://m/\n"), ctx); }) ==
        "2 " + path +
            ":7:3: repository_overrides: the stack has no repository \"cdua\" (did you mean \"cuda\"?)");
  CHECK(ErrorOf([&] { m::LoadStack(site("  mirror:\n    url: http://m/\n"), ctx); }) ==
        "2 " + path +
            ":7:3: repository_overrides: the stack has no repository \"mirror\" (it has: cuda, cuda, cuda, "
            "nvidia-container-toolkit)");
  // User info in a URL, and a keyring over plain http from a non-loopback host, are refused like in a stack.
  CHECK(
      gp::StartsWith(ErrorOf([&] { m::LoadStack(site("  cuda:\n    url: https://u:p@m.example/\n"), ctx); }),
                     "2 " + path + ":8:10: \"https://u:p@m.example/\": "));
  CHECK(gp::StartsWith(ErrorOf([&] {
                         m::LoadStack(
                             site("  cuda:\n    keyring_url: http://m.example/k.pub\n    key_fingerprint: "
                                  "EB693B3035CD5710E231E123A4B469963BF863CC\n"),
                             ctx);
                       }),
                       "2 " + path + ":8:18: \"http://m.example/k.pub\": "));
}

TEST_CASE(
    "a site file gives a known CUDA to an image its stack calls unknown; errors point into the site file",
    "[manifest]") {
  gp::test::TempRoot t;
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  const std::string head =
      "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
      "metadata: {name: site}\nimage:\n";
  t.Write("/site.yaml", head + "  cuda: 12.2.2\n");
  m::Stack s = m::LoadStack(t.path() + "/site.yaml", ctx);
  REQUIRE(s.image.cuda.known());
  CHECK(s.image.cuda.version->str() == "12.2.2");
  CHECK(s.image.cuda.reason.empty());  // the embedded stack's reason for not knowing went with its "unknown"
  CHECK(s.origins.at("image.cuda") == t.path() + "/site.yaml:6:9");
  CHECK(s.image.ref == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(gp::StartsWith(s.origins.at("image.ref"), kBase + ":"));

  t.Write("/bad.yaml", head + "  cuda: 12.x\n");
  CHECK(gp::StartsWith(ErrorOf([&] { m::LoadStack(t.path() + "/bad.yaml", ctx); }),
                       "2 " + t.path() + "/bad.yaml:6:9: "));
  t.Write("/both.yaml", head + "  cuda: 12.2.2\n  cuda_unknown_reason: \"still unsure\"\n");
  CHECK(ErrorOf([&] { m::LoadStack(t.path() + "/both.yaml", ctx); }) ==
        "2 " + t.path() + "/both.yaml:7:3: cuda_unknown_reason is only allowed with cuda: unknown");
  t.Write("/silent.yaml", head + "  cuda: unknown\n");  // unknown again: the stack's reason stands
  CHECK(m::LoadStack(t.path() + "/silent.yaml", ctx).image.cuda.unknown);
}

TEST_CASE("a site file pins a version its stack left unknown: the stack's unknown_reason goes too",
          "[manifest]") {
  gp::test::TempRoot t;
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  t.Write("/base.yaml", std::string(gp::test::Edit(
                            "cudnn: {version: 8.9.7.29, cuda_major: 12}",
                            "cudnn: {version: unknown, unknown_reason: \"no notes\", cuda_major: 12}")));
  t.Write("/site.yaml",
          "apiVersion: gpuprep/v1\nkind: Stack\nextends: base.yaml\nmetadata: {name: s}\n"
          "cudnn: {version: 8.9.7.29}\n");
  m::Stack s = m::LoadStack(t.path() + "/site.yaml", ctx);
  REQUIRE(s.cudnn.version.known());
  CHECK(s.cudnn.version.version->str() == "8.9.7.29");
  CHECK(s.origins.at("cudnn.version") == t.path() + "/site.yaml:5:18");
}
