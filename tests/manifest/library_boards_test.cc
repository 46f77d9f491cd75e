// Pinned libraries against the boards a stack claims (compat.yaml library_builds): the default choice skips a
// stack whose NCCL or cuDNN carries no code for one of the host's boards.
#include <catch2/catch.hpp>

#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "util/strings.h"

using gp::Version;
using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {
Version Cc(const char* text) { return Version::Must(text); }

m::HostQuery LibraryHost(const std::vector<std::string>& archs, const std::vector<std::string>& pci_ids) {
  m::HostQuery q{"ubuntu", "22.04", archs, {}};
  for (const auto& pci : pci_ids) q.boards.push_back(m::EmbeddedCompat().GpuByPciId(pci));
  return q;
}
}  // namespace

TEST_CASE("the default choice skips a stack whose NCCL has no code for the host's board", "[manifest]") {
  // NCCL 2.30.7 (volta-r580.173.02-cuda12.9.1) builds no Maxwell code; 2.27.3 (volta-r580-cuda12.9) does.
  CHECK(m::ChooseDefaultStack(LibraryHost({"maxwell"}, {"0x13f2"})).name == "volta-r580-cuda12.9");  // M60
  CHECK(m::ChooseDefaultStack(LibraryHost({"maxwell"}, {"0x17fd"})).name == "volta-r580-cuda12.9");  // M40
  // Pascal keeps the newer stack: 2.30.7 carries sm_60 and sm_61.
  CHECK(m::ChooseDefaultStack(LibraryHost({"pascal"}, {"0x15f8"})).name == "volta-r580.173.02-cuda12.9.1");
  CHECK(m::ChooseDefaultStack(LibraryHost({"pascal"}, {"0x1bb3"})).name == "volta-r580.173.02-cuda12.9.1");
}

TEST_CASE("a library build runs where its cubins or PTX reach, or above its floor", "[manifest]") {
  m::LibraryBuild b;
  b.sass = {Cc("6.0"), Cc("7.0"), Cc("8.0")};
  b.ptx = {Cc("8.0")};
  CHECK_FALSE(b.Runs(Cc("5.2")));  // no Maxwell cubin, and PTX runs only on later capabilities
  CHECK(b.Runs(Cc("6.1")));        // a 6.0 cubin runs on 6.1
  CHECK(b.Runs(Cc("7.5")));
  CHECK(b.Runs(Cc("8.6")));
  CHECK(b.Runs(Cc("9.0")));  // PTX 8.0 compiled by the driver
  CHECK(b.Carries() == "cubins for 6.0, 7.0, 8.0 and PTX for 8.0");
  m::LibraryBuild cubins_only;
  cubins_only.sass = {Cc("7.5"), Cc("9.0")};
  CHECK_FALSE(cubins_only.Runs(Cc("7.0")));  // a later minor's cubin does not run on an earlier one
  CHECK_FALSE(cubins_only.Runs(Cc("8.0")));  // nor on another major
  CHECK(cubins_only.Runs(Cc("9.0")));
  m::LibraryBuild floor;
  floor.min_cc = Cc("5.0");
  CHECK(floor.Runs(Cc("5.2")));
  CHECK_FALSE(floor.Runs(Cc("3.7")));
  CHECK(floor.Carries() == "compute capability 5.0 and later");
}

TEST_CASE("every NCCL build a shipped stack pins has its architectures in compat.yaml", "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  for (const auto& name : m::EmbeddedStackNames()) {
    INFO(name);
    const m::Stack s = m::LoadStack(name, m::LoadContext{});
    REQUIRE(s.nccl.version.known());
    CHECK(c.LibraryBuildFor("nccl", *s.nccl.version.version, s.cuda.version.version->Prefix(2)) != nullptr);
  }
  // NCCL has no Maxwell code from 2.28.3 on (compute_50 leaves makefiles/common.mk after v2.27.7-1).
  const m::GpuModel* m60 = c.GpuByPciId("0x13f2");
  REQUIRE(m60);
  CHECK(c.LibraryBuildFor("nccl", Version::Must("2.27.3"), Version::Must("12.9"))->Runs(m60->cc));
  CHECK_FALSE(c.LibraryBuildFor("nccl", Version::Must("2.30.7"), Version::Must("12.9"))->Runs(m60->cc));
  // cuDNN: a pin matches the row it begins with, for the CUDA major it is built for.
  CHECK(c.LibraryBuildFor("cudnn", Version::Must("9.10.2.21"), Version::Must("12")) != nullptr);
  CHECK(c.LibraryBuildFor("cudnn", Version::Must("9.10.2.21"), Version::Must("13")) == nullptr);
  CHECK(c.LibraryBuildFor("cudnn", Version::Must("9.10"), Version::Must("12")) == nullptr);
}

TEST_CASE("LibraryCannotRun and LibraryWarnings name the library, its build and what it carries",
          "[manifest]") {
  const m::Compat& c = m::EmbeddedCompat();
  const m::Stack newer = m::LoadStack("volta-r580.173.02-cuda12.9.1", m::LoadContext{});
  const m::Stack older = m::LoadStack("volta-r580-cuda12.9", m::LoadContext{});
  const m::GpuModel* m60 = c.GpuByPciId("0x13f2");
  const m::GpuModel* p100 = c.GpuByPciId("0x15f8");
  REQUIRE((m60 && p100));
  CHECK(m::LibraryCannotRun(c, newer, *m60) ==
        "NCCL 2.30.7 (its CUDA 12.9 build) has no code for compute capability 5.2 (cubins for 6.0, 6.1, 7.0, "
        "8.0, 9.0, 10.0, 12.0 and PTX for 12.0: NVIDIA/nccl makefiles/common.mk at v2.30.7-1)");
  CHECK(m::LibraryCannotRun(c, older, *m60).empty());
  CHECK(m::LibraryCannotRun(c, newer, *p100).empty());
  // A cuDNN floor decides when NCCL runs: 9.10.2 for CUDA 12 from compute capability 5.0.
  m::Stack kepler_cudnn = older;
  m::GpuModel k80 = *m60;
  k80.cc = Version::Must("3.7");
  kepler_cudnn.nccl.enabled = false;
  CHECK(
      m::LibraryCannotRun(c, kepler_cudnn, k80) ==
      "cuDNN 9.10.2.21 (its CUDA 12 build) has no code for compute capability 3.7 (compute capability 5.0 "
      "and later: https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html (9.10.2, CUDA "
      "12))");
  const std::vector<std::string> w = m::LibraryWarnings(newer);
  REQUIRE(w.size() == 2);
  CHECK(w[0].rfind("stack claims Tesla M60 (0x13f2, maxwell) but NCCL 2.30.7", 0) == 0);
  CHECK(w[1].rfind("stack claims Tesla M40 (0x17fd, maxwell) but NCCL 2.30.7", 0) == 0);
  for (const auto& name : m::EmbeddedStackNames()) {
    INFO(name);
    if (name != newer.name) CHECK(m::LibraryWarnings(m::LoadStack(name, m::LoadContext{})).empty());
  }
}

TEST_CASE("broken library_builds rows", "[manifest]") {
  const std::string head =
      "apiVersion: gpuprep/v1\nkind: Compat\ncuda_min_driver: []\nminor_compat: []\ngpus: "
      "[]\nlibrary_builds:\n";
  auto err = [&](const std::string& row) {
    return ErrorOf([&] { m::ParseCompat(head + "  - " + row + "\n", "compat.yaml"); });
  };
  const std::string src = ", source: \"x\"}";
  CHECK(err("{library: rccl, version: \"2.30.7\", cuda: \"12.9\", ptx: [\"12.0\"]" + src) ==
        "2 compat.yaml:7:15: library must be nccl or cudnn, got \"rccl\"");
  CHECK(err("{library: nccl, version: \"2.30.7\", cuda: \"12\", ptx: [\"12.0\"]" + src) ==
        "2 compat.yaml:7:46: cuda of a nccl build is a CUDA minor (like \"12.9\"), got \"12\"");
  CHECK(err("{library: cudnn, version: \"9.10.2\", cuda: \"12.9\", min_cc: \"5.0\"" + src) ==
        "2 compat.yaml:7:47: cuda of a cudnn build is a CUDA major (like \"12\"), got \"12.9\"");
  CHECK(err("{library: nccl, version: \"2.30.7\", cuda: \"12.9\", sass: [\"60\"]" + src) ==
        "2 compat.yaml:7:61: \"60\" is not a compute capability (like \"8.0\")");
  CHECK(err("{library: nccl, version: \"2.30.7\", cuda: \"12.9\"" + src) ==
        "2 compat.yaml:7:5: a library build names either min_cc or the code it carries (sass, ptx)");
  CHECK(err("{library: cudnn, version: \"9.10.2\", cuda: \"12\", min_cc: \"5.0\", ptx: [\"5.0\"]" + src) ==
        "2 compat.yaml:7:5: a library build names either min_cc or the code it carries (sass, ptx)");
  CHECK(err("{library: nccl, version: \"2.30.7\", cuda: \"12.9\", ptx: [\"12.0\"]}") ==
        "2 compat.yaml:7:5: library_builds: missing required key \"source\"");
}

// The default choice builds only the stacks its build-time tables cannot rule out; its answer is the one of
// every stack built and judged (SupportsHost, RanksAbove, Succeeds), for each OS and architecture mix.
TEST_CASE("the default choice equals the choice over every stack built", "[manifest]") {
  const std::vector<std::pair<std::string, std::string>> systems = {
      {"ubuntu", "22.04"}, {"ubuntu", "24.04"}, {"debian", "12"}, {"ubuntu", "20.04"}, {"", ""}};
  const std::vector<std::vector<std::string>> mixes = {
      {"maxwell"}, {"pascal"}, {"volta"},     {"turing"},          {"ampere"},
      {"ada"},     {"hopper"}, {"blackwell"}, {"volta", "hopper"}, {"hopper", "blackwell"},
      {}};
  std::vector<m::Stack> all;
  for (const auto& name : m::EmbeddedStackNames()) all.push_back(m::LoadStack(name, m::LoadContext{}));
  for (const auto& [id, version] : systems) {
    for (const auto& archs : mixes) {
      const m::HostQuery q{id, version, archs, {}};
      const m::Stack* best = nullptr;
      for (const m::Stack& s : all)
        if (!s.legacy && m::SupportsHost(s, q) && (!best || m::RanksAbove(s, *best) || m::Succeeds(s, *best)))
          best = &s;
      INFO(id << " " << version << " " << gp::Join(archs, ","));
      if (best)
        CHECK(m::ChooseDefaultStack(q).name == best->name);
      else
        CHECK_THROWS(m::ChooseDefaultStack(q));
    }
  }
}
