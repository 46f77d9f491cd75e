// The resolver against an index shaped like NVIDIA's CUDA repository: many point releases of each package,
// both revision styles within a branch, meta packages with exact (=) and open (>=) relations on their
// components, CUDA builds in the revision, i386 libraries in the same flat repository, a pruned release.
#include "apt/resolve.h"

#include <catch2/catch.hpp>
#include <chrono>

#include "apt/index.h"
#include "apt/preferences.h"
#include "util/version.h"

using namespace gp;
using namespace gp::apt;

namespace {

std::string ResolveStanza(const std::string& name, const std::string& version,
                          const std::string& depends = "", const std::string& arch = "amd64",
                          const std::string& provides = "") {
  std::string s = "Package: " + name + "\nVersion: " + version + "\nArchitecture: " + arch + "\n";
  if (!depends.empty()) s += "Depends: " + depends + "\n";
  if (!provides.empty()) s += "Provides: " + provides + "\n";
  return s + "Filename: ./" + name + "_" + version + "_" + arch + ".deb\nSize: 1\n\n";
}

// One R580 point release in NVIDIA's Ubuntu-style layout.
std::string Driver580(const std::string& up, const std::string& rev) {
  const std::string v = up + "-" + rev;
  return ResolveStanza("nvidia-driver-580-open", v,
                       "nvidia-dkms-580-open (= " + v + "), libnvidia-compute-580 (= " + v +
                           "), nvidia-utils-580 (= " + v + ")") +
         ResolveStanza(
             "nvidia-dkms-580-open", v,
             "dkms, nvidia-kernel-common-580 (<= " + up + "-1), nvidia-kernel-common-580 (>= " + up + ")") +
         ResolveStanza("nvidia-kernel-common-580", v, "", "amd64", "nvidia-kernel-common-580-" + up) +
         ResolveStanza("libnvidia-compute-580", v, "libc6 (>= 2.34)") +
         ResolveStanza("libnvidia-compute-580", v, "", "i386") +
         ResolveStanza("nvidia-utils-580", v,
                       "libnvidia-compute-580 (>= " + up + "), nvidia-kernel-common-580-" + up) +
         ResolveStanza("nvidia-fabricmanager-580", v, "linux-headers-generic | linux-headers") +
         ResolveStanza("cuda-drivers-580", v, "nvidia-driver-580-open (>= " + up + ")");
}

Index NvidiaLike() {
  std::string text;
  for (auto [up, rev] : std::vector<std::pair<std::string, std::string>>{{"580.65.06", "0ubuntu1"},
                                                                         {"580.95.05", "0ubuntu1"},
                                                                         {"580.105.08", "0ubuntu1"},
                                                                         {"580.126.09", "1ubuntu1"},
                                                                         {"580.159.04", "1ubuntu1"}})
    text += Driver580(up, rev);
  // 580.82.07 was pruned: not in the index.
  for (const char* v : {"2.27.7-1+cuda13.0", "2.27.7-1+cuda12.9", "2.28.3-1+cuda13.0", "2.27.3-1+cuda12.9"}) {
    text += ResolveStanza("libnccl2", v);
    text += ResolveStanza("libnccl-dev", v, std::string("libnccl2 (= ") + v + ")");
  }
  for (auto [meta, comp] : std::vector<std::pair<std::string, std::string>>{
           {"13.0.0", "13.0.48"}, {"13.0.1", "13.0.88"}, {"13.0.2", "13.0.88"}, {"13.0.3", "13.0.96"}}) {
    text += ResolveStanza("cuda-toolkit-13-0", meta + "-1",
                          "cuda-cudart-13-0 (>= " + comp + "), cuda-nvcc-13-0 (>= " + comp + ")");
    text += ResolveStanza("cuda-cudart-13-0", comp + "-1");
    text += ResolveStanza("cuda-nvcc-13-0", comp + "-1");
  }
  Index index;
  ParsePackages(text, "amd64", index);
  return index;
}

std::map<std::string, std::string> AsMap(const Closure& c) { return {c.packages.begin(), c.packages.end()}; }

}  // namespace

TEST_CASE("relations parse like dpkg's, alternatives and qualifiers included", "[apt][resolve]") {
  auto rel = ParseRelations("libc6 (>= 2.34), aa | bb:any (= 1.0-1), cc (<< 2), broken (~ 1)");
  REQUIRE(rel.size() == 3);  // the malformed clause is dropped
  CHECK(rel[0][0].str() == "libc6 (>= 2.34)");
  REQUIRE(rel[1].size() == 2);
  CHECK(rel[1][1].name == "bb");
  CHECK(rel[1][1].op == "=");
  CHECK(Satisfies("1.9", rel[2][0]));
  CHECK_FALSE(Satisfies("2", rel[2][0]));
  CHECK(Satisfies("580.95.05-0ubuntu1", Relation{"x", "<=", "580.95.05-1"}));
}

TEST_CASE("a repository's names and versions that are not Debian's never enter the index", "[apt][resolve]") {
  // What a hostile or broken Packages file may carry: an option word as a package name (apt-get would read
  // "--allow-unauthenticated=1" on its command line as an option), a version that is one, a dependency on
  // one.
  Index index;
  ParsePackages(
      "Package: --allow-unauthenticated\nVersion: 1\nArchitecture: amd64\n\n"
      "Package: libgood\nVersion: -oDpkg::Pre-Invoke::=touch\nArchitecture: amd64\n\n"
      "Package: Upper\nVersion: 1.0\nArchitecture: amd64\n\n"
      "Package: meta\nVersion: 1.0-1\nArchitecture: amd64\n"
      "Depends: --allow-unauthenticated (= 1), libok (= 1.0 --force), libok (>= 1.0)\n"
      "Provides: -x\n\n"
      "Package: libok\nVersion: 1.0\nArchitecture: amd64\n",
      "amd64", index);
  CHECK(index.Names() == std::vector<std::string>{"libok", "meta"});
  const auto* meta = index.Find("meta", "1.0-1");
  REQUIRE(meta);
  REQUIRE(meta->depends.size() == 1);  // only the well-formed relation is followed
  CHECK(meta->depends[0][0].str() == "libok (>= 1.0)");
  CHECK(meta->provides.empty());
  auto closure = ComputeClosure(index, {}, {{"meta", "1.0-1"}});
  REQUIRE(closure.ok());
  CHECK(closure.packages ==
        std::vector<std::pair<std::string, std::string>>{{"libok", "1.0"}, {"meta", "1.0-1"}});
}

TEST_CASE("the index keeps every point release, highest first, and only this architecture",
          "[apt][resolve]") {
  Index index = NvidiaLike();
  const auto* list = index.Find("libnvidia-compute-580");
  REQUIRE(list);
  REQUIRE(list->size() == 5);  // the i386 builds are not counted
  CHECK(list->front().version == "580.159.04-1ubuntu1");
  CHECK(list->back().version == "580.65.06-0ubuntu1");
  CHECK(index.Providers("nvidia-kernel-common-580-580.95.05") ==
        std::vector<std::string>{"nvidia-kernel-common-580"});
}

TEST_CASE("an upstream pin resolves to the repository's revision, whatever its style", "[apt][resolve]") {
  Index index = NvidiaLike();
  CHECK(ResolvePin(index, {"nvidia-driver-580-open", "", "580.95.05", ""}).version == "580.95.05-0ubuntu1");
  CHECK(ResolvePin(index, {"nvidia-driver-580-open", "", "580.126.09", ""}).version == "580.126.09-1ubuntu1");
  // An exact version from a site file wins.
  CHECK(ResolvePin(index, {"nvidia-driver-580-open", "580.65.06-0ubuntu1", "580.95.05", ""}).version ==
        "580.65.06-0ubuntu1");
}

TEST_CASE("packages that name their CUDA build take the stack's CUDA major.minor", "[apt][resolve]") {
  Index index = NvidiaLike();
  CHECK(ResolvePin(index, {"libnccl2", "", "2.27.7", "13.0"}).version == "2.27.7-1+cuda13.0");
  CHECK(ResolvePin(index, {"libnccl2", "", "2.27.7", "12.9"}).version == "2.27.7-1+cuda12.9");
  auto ambiguous = ResolvePin(index, {"libnccl2", "", "2.27.7", ""});
  CHECK_FALSE(ambiguous.ok());
  CHECK(ambiguous.error.find("ambiguous") != std::string::npos);
  auto none = ResolvePin(index, {"libnccl2", "", "2.27.3", "13.0"});
  CHECK_FALSE(none.ok());
  CHECK(none.error ==
        "libnccl2 2.27.3 built for CUDA 13.0 is not in the repository (nearest: 2.27.7-1+cuda13.0)");
  CHECK(MatchesPin("2.27.7-1+cuda13.0", {"libnccl2", "", "2.27.7", "13.0"}));
  CHECK_FALSE(MatchesPin("2.27.7-1+cuda12.9", {"libnccl2", "", "2.27.7", "13.0"}));
  CHECK(
      MatchesPin("9.12.0.46-1", {"libcudnn9-cuda-13", "", "9.12.0.46", "13.0"}));  // no build in the revision
}

TEST_CASE("a pruned point release is refused naming the nearest releases", "[apt][resolve]") {
  Index index = NvidiaLike();
  auto r = ResolvePin(index, {"nvidia-driver-580-open", "", "580.82.07", ""});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error ==
        "nvidia-driver-580-open 580.82.07 is not in the repository (nearest: 580.65.06-0ubuntu1, "
        "580.95.05-0ubuntu1)");
  auto missing = ResolvePin(index, {"nvidia-open-580", "", "580.95.05", ""});
  CHECK(missing.error.rfind("nvidia-open-580: no such package in the repository", 0) == 0);
  auto exact = ResolvePin(index, {"libnccl2", "2.27.7-2+cuda13.0", "", ""});
  CHECK(exact.error.find("is not in the repository") != std::string::npos);
}

TEST_CASE("the closure pins a meta package's components at its exact versions, not the newest",
          "[apt][resolve]") {
  Index index = NvidiaLike();
  auto c = ComputeClosure(index, {}, {{"nvidia-driver-580-open", "580.95.05-0ubuntu1"}});
  REQUIRE(c.ok());
  auto m = AsMap(c);
  CHECK(m.at("nvidia-dkms-580-open") == "580.95.05-0ubuntu1");
  CHECK(m.at("libnvidia-compute-580") == "580.95.05-0ubuntu1");
  // nvidia-utils-580 asks for libnvidia-compute-580 (>= 580.95.05): the release's own, not 580.159.04.
  CHECK(m.at("nvidia-utils-580") == "580.95.05-0ubuntu1");
  // (<= 580.95.05-1) and (>= 580.95.05) on the same package, and a versioned virtual package.
  CHECK(m.at("nvidia-kernel-common-580") == "580.95.05-0ubuntu1");
  CHECK_FALSE(m.count("dkms"));  // the distribution's: not in this index, left to apt
  CHECK_FALSE(m.count("libc6"));
  CHECK(m.size() == 5);
}

TEST_CASE("a lower bound takes the component the meta was built with, unless a newer one is installed",
          "[apt][resolve]") {
  Index index = NvidiaLike();
  auto c = ComputeClosure(index, {}, {{"cuda-toolkit-13-0", "13.0.2-1"}});
  REQUIRE(c.ok());
  CHECK(AsMap(c).at("cuda-cudart-13-0") == "13.0.88-1");  // not 13.0.96 from 13.0.3
  auto kept = ComputeClosure(index, {{"cuda-cudart-13-0", "13.0.88-1"}}, {{"cuda-toolkit-13-0", "13.0.2-1"}});
  CHECK(AsMap(kept).at("cuda-cudart-13-0") == "13.0.88-1");
  auto old = ComputeClosure(index, {{"cuda-cudart-13-0", "13.0.48-1"}}, {{"cuda-toolkit-13-0", "13.0.2-1"}});
  CHECK(AsMap(old).at("cuda-cudart-13-0") == "13.0.88-1");  // the installed one no longer satisfies
}

TEST_CASE("kernel header packages are never part of the closure", "[apt][resolve]") {
  Index index = NvidiaLike();
  ParsePackages(ResolveStanza("linux-headers-generic", "5.15.0.100.97"), "amd64", index);
  auto c = ComputeClosure(index, {}, {{"nvidia-fabricmanager-580", "580.95.05-0ubuntu1"}});
  REQUIRE(c.ok());
  CHECK(AsMap(c).size() == 1);
  CHECK(IsKernelPackage("linux-image-6.8.0-45-generic"));
  CHECK(IsKernelPackage("linux-modules-nvidia-580-open-generic"));
  CHECK_FALSE(IsKernelPackage("nvidia-dkms-580-open"));
}

TEST_CASE("conflicting exact relations are an error naming both sides", "[apt][resolve]") {
  Index index = NvidiaLike();
  auto c = ComputeClosure(
      index, {},
      {{"nvidia-driver-580-open", "580.95.05-0ubuntu1"}, {"libnvidia-compute-580", "580.159.04-1ubuntu1"}});
  REQUIRE_FALSE(c.ok());
  CHECK(c.error ==
        "nvidia-driver-580-open=580.95.05-0ubuntu1 needs libnvidia-compute-580 (= 580.95.05-0ubuntu1) but "
        "the stack pins "
        "libnvidia-compute-580=580.159.04-1ubuntu1");
}

TEST_CASE("the preferences file pins each package exactly above 1000 and reads back", "[apt][resolve]") {
  const std::map<std::string, Pin> pins = {
      {"libnccl2", {"2.27.7-1+cuda13.0", {"nccl"}}},
      {"nvidia-utils-580", {"580.95.05-0ubuntu1", {"driver", "fabricmanager"}}}};
  const std::string text = PreferencesContents("s", pins);
  CHECK(text.find("\nExplanation: gpuprep layers: nccl\nPackage: libnccl2\nPin: version 2.27.7-1+cuda13.0\n"
                  "Pin-Priority: 1001\n") != std::string::npos);
  CHECK(text.find("\nExplanation: gpuprep layers: driver, fabricmanager\nPackage: nvidia-utils-580\n") !=
        std::string::npos);
  CHECK(ReadPins(text) == pins);
  auto back = ParsePreferences(text);
  CHECK(back == std::map<std::string, std::string>{{"libnccl2", "2.27.7-1+cuda13.0"},
                                                   {"nvidia-utils-580", "580.95.05-0ubuntu1"}});
  // A file written before the layers were recorded: the pins, owned by no named layer.
  CHECK(ReadPins("Package: libnccl2\nPin: version 2.27.7-1+cuda13.0\nPin-Priority: 1001\n") ==
        std::map<std::string, Pin>{{"libnccl2", {"2.27.7-1+cuda13.0", {}}}});
  CHECK(ParsePreferences("Package: *\nPin: release l=NVIDIA CUDA\nPin-Priority: 600\n").empty());
}

TEST_CASE("the index takes 40,000 versions of one package in n log n, highest first", "[apt][resolve]") {
  // One insertion in order each was quadratic: 40,000 versions took 12.9 s. Added oldest first (the order
  // that was worst), twice over (a second origin carrying the same builds), with two architectures each.
  constexpr int kN = 40000;
  std::string text;
  for (int i = 0; i < kN; ++i) text += ResolveStanza("libfoo", "1." + std::to_string(i) + "-1");
  for (int i = 0; i < kN; i += 1000)
    text += ResolveStanza("libfoo", "1." + std::to_string(i) + "-1", "", "all");
  const auto start = std::chrono::steady_clock::now();
  Index index;
  ParsePackages(text, "amd64", index);
  ParsePackages(text, "amd64", index);  // the same builds again: kept once
  const auto* list = index.Find("libfoo");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(list);
  CHECK(list->size() == kN + kN / 1000);
  CHECK(list->front().version == "1." + std::to_string(kN - 1) + "-1");
  CHECK(list->back().version == "1.0-1");
  CHECK((*list)[list->size() - 2].version == "1.0-1");  // equal versions: in the order they came
  CHECK((*list)[list->size() - 2].architecture == "amd64");
  CHECK(list->back().architecture == "all");
  for (size_t i = 1; i < list->size(); ++i)
    REQUIRE(CompareDebVersions((*list)[i - 1].version, (*list)[i].version) >= 0);
  INFO("seconds: " << seconds);
  CHECK(seconds < 5);  // parsing included; a Debug build on a shared runner takes well under 1 s
}
