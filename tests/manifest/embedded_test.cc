// Every shipped manifest loads and validates, and the stacks obey the rules the facts impose.
#include "util/embedded.h"

#include <catch2/catch.hpp>

#include "launch/profile.h"
#include "manifest/loader.h"
#include "util/error.h"
#include "util/strings.h"

namespace m = gp::manifest;

TEST_CASE("every embedded manifest validates", "[manifest]") {
  auto files = gp::ListEmbedded("manifests/");
  REQUIRE(files.size() >= 4);
  for (const gp::EmbeddedFile* f : files) {
    if (!gp::EndsWith(f->path, ".yaml")) continue;  // shipped-stacks.lock: tests/manifest/digest_test.cc
    INFO(f->path);
    std::string kind = m::ValidateDocument(std::string(f->data, f->size), f->path, m::LoadContext{});
    CHECK(kind == (std::string(f->path) == "manifests/compat.yaml" ? "Compat"
                   : gp::StartsWith(f->path, "manifests/stacks/")  ? "Stack"
                                                                   : "Profile"));
    if (kind == "Profile")
      gp::launch::ParseProfile(std::string(f->data, f->size), f->path);  // launch owns the fields
  }
}

TEST_CASE("embedded stacks: names, CUDA majors, toolkit advisories, drivers", "[manifest]") {
  const auto names = m::EmbeddedStackNames();
  CHECK(names == std::vector<std::string>{
                     "blackwell-r580-cuda13.0", "blackwell-r580.173.02-cuda13.0.3",
                     "blackwell-r580.173.02-cuda13.0.3-nvlsm", "blackwell-r595.91.07-cuda13.2.2",
                     "blackwell-r595.91.07-cuda13.2.2-nvlsm", "hopper-r580-cuda13.0",
                     "hopper-r580.173.02-cuda13.0.3", "hopper-r595.91.07-cuda13.2.2",
                     "ubuntu22.04-r535-cuda12.2", "volta-r580-cuda12.9", "volta-r580.173.02-cuda12.9.1"});
  const m::Compat& compat = m::EmbeddedCompat();
  for (const auto& name : names) {
    INFO(name);
    m::Stack s = m::LoadStack(name, m::LoadContext{});
    CHECK(s.name == name);  // metadata.name is the file stem: EmbeddedStackNames lists without parsing
    CHECK(s.source == "embedded:" + name);
    REQUIRE(s.cuda.version.known());
    const int major = static_cast<int>(s.cuda.version.version->major());
    REQUIRE(s.cudnn.cuda_major);
    CHECK(*s.cudnn.cuda_major == major);
    REQUIRE(s.nccl.cuda_major);
    CHECK(*s.nccl.cuda_major == major);
    for (const auto& p :
         s.cudnn.packages)  // cuDNN 9 names the CUDA major; cuDNN 8 carries it in the revision
      CHECK((gp::EndsWith(p.name, "-cuda-" + std::to_string(major)) || gp::StartsWith(p.name, "libcudnn8")));
    REQUIRE(s.container_toolkit.version.known());
    for (const auto& adv : compat.toolkit_advisories)
      CHECK(*s.container_toolkit.version.version >= adv.fixed_in);
    // Every package pins the upstream version (the layer's) and leaves the revision to the repository's
    // index.
    for (const auto* c : {&s.cuda, &s.cudnn, &s.nccl, &s.container_toolkit})
      for (const auto& p : c->packages) {
        CHECK(p.version.empty());
        CHECK(p.upstream.empty());
      }
    CHECK(s.container_toolkit.packages.size() == 4);
    // the pinned driver runs the stack's CUDA natively
    REQUIRE(s.driver.version.known());
    CHECK(*s.driver.version.version >= *compat.MinDriverFor(*s.cuda.version.version));
    // every GPU of every supported architecture can run this driver branch
    for (const auto& g : compat.gpus) {
      if (std::find(s.architectures.begin(), s.architectures.end(), g.arch) == s.architectures.end())
        continue;
      INFO(g.name);
      CHECK(g.min_driver_branch <= s.driver.branch);
      if (g.last_driver_branch) CHECK(s.driver.branch <= *g.last_driver_branch);
      if (g.max_cuda_major) CHECK(major <= *g.max_cuda_major);
      CHECK(g.min_cuda <= *s.cuda.version.version);
    }
    // every OS target has its CUDA repository, signed by the pinned key
    for (const auto& os : s.os) {
      auto repos = s.RepositoriesFor(os.id, os.version_id);
      int cuda_repos = 0;
      for (const auto* r : repos) {
        CHECK((!r->key_fingerprint.empty() || !r->keyring_sha256.empty()));
        cuda_repos += r->name == "cuda";
      }
      CHECK(cuda_repos == 1);
    }
    // No shipped stack carries CPU or RAM numbers of its own: the host layer uses the sourced ratios.
    CHECK(s.workload.min_cpus_per_gpu == 0);
    CHECK(s.workload.min_ram_per_gpu == 0);
  }
}

TEST_CASE("the R535 stack is legacy: past its end of life, never the default", "[manifest]") {
  m::Stack s = m::LoadStack("ubuntu22.04-r535-cuda12.2", m::LoadContext{});
  CHECK(s.legacy);
  CHECK(s.driver.end_of_life == "2026-06");
  CHECK(s.SupportsOs("ubuntu", "22.04"));
  CHECK_FALSE(s.SupportsOs("ubuntu", "24.04"));
  CHECK(s.driver.version.version->str() == "535.129.03");
  CHECK(s.driver.fabricmanager_packages.at(0).name == "nvidia-fabricmanager-535");
  CHECK(s.cuda.version.version->str() == "12.2.2");
  CHECK(s.cudnn.packages.at(0).name == "libcudnn8");
  CHECK(s.image.ref == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(s.image.cuda.unknown);
}

TEST_CASE("the Blackwell stack extends the Hopper one", "[manifest]") {
  m::Stack b = m::LoadStack("blackwell-r580-cuda13.0", m::LoadContext{});
  CHECK(b.extends_chain == std::vector<std::string>{"hopper-r580-cuda13.0"});
  CHECK(b.architectures == std::vector<std::string>{"blackwell"});
  CHECK(b.origins.at("architectures") == "manifests/stacks/blackwell-r580-cuda13.0.yaml:13:16");
  CHECK(gp::StartsWith(b.origins.at("driver.version"), "manifests/stacks/hopper-r580-cuda13.0.yaml:"));
  CHECK(b.driver.flavour == "open");
  CHECK(b.cudnn.version.version->str() == "9.12.0.46");
  CHECK(b.nccl.version.version->str() == "2.27.7");
  CHECK(b.image.cuda.version->str() == "13.1.0");
  CHECK(b.RepositoriesFor("debian", "12").size() == 2);
}

TEST_CASE("the R580 stacks set up the distribution's Docker in the runtime mode; the legacy one does not",
          "[manifest]") {
  for (const char* name : {"hopper-r580-cuda13.0", "blackwell-r580-cuda13.0", "volta-r580-cuda12.9",
                           "hopper-r580.173.02-cuda13.0.3", "blackwell-r580.173.02-cuda13.0.3",
                           "volta-r580.173.02-cuda12.9.1"}) {
    INFO(name);
    m::Stack s = m::LoadStack(name, m::LoadContext{});
    CHECK(s.docker.present);
    CHECK(s.docker.engine == "docker.io");
    REQUIRE(s.docker.packages.size() == 1);
    CHECK(s.docker.packages[0].name == "docker.io");
    CHECK(s.docker.packages[0].version.empty());  // the distribution's package, by name
    CHECK(s.docker.packages[0].upstream.empty());
    CHECK(s.docker.gpu_access == "runtime");  // Debian 12's docker.io (20.10) has no CDI (Docker 25)
    CHECK_FALSE(s.docker.default_runtime);
    CHECK(s.docker.toolkit_mode.empty());  // the toolkit's own default
    CHECK(gp::StartsWith(s.origins.at("docker.engine"), "manifests/stacks/hopper-r580-cuda13.0.yaml:"));
  }
  CHECK_FALSE(m::LoadStack("ubuntu22.04-r535-cuda12.2", m::LoadContext{}).docker.present);
}

namespace {
m::HostQuery Host(const std::string& id, const std::string& version, std::vector<std::string> archs,
                  std::vector<std::string> pci_ids = {}) {
  m::HostQuery q{id, version, std::move(archs), {}};
  for (const auto& pci : pci_ids) q.boards.push_back(m::EmbeddedCompat().GpuByPciId(pci));
  return q;
}
}  // namespace

TEST_CASE("ChooseDefaultStack picks the newest long-term-support stack for the host and says why",
          "[manifest]") {
  auto c = m::ChooseDefaultStack(Host("ubuntu", "22.04", {"hopper"}));
  CHECK(c.name == "hopper-r580.173.02-cuda13.0.3");
  CHECK(c.reason ==
        "the newest long-term-support stack (driver 580.173.02, R580 LTS, CUDA 13.0.3) that supports ubuntu "
        "22.04 "
        "and hopper GPUs");
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "22.04", {"volta"})).name == "volta-r580.173.02-cuda12.9.1");
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "22.04", {"volta", "hopper"})).name ==
        "volta-r580.173.02-cuda12.9.1");
  CHECK(m::ChooseDefaultStack(Host("debian", "12", {"ampere"})).name == "hopper-r580.173.02-cuda13.0.3");
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "24.04", {"blackwell", "blackwell"})).name ==
        "blackwell-r580.173.02-cuda13.0.3-nvlsm");
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "22.04", {})).name ==
        "hopper-r580.173.02-cuda13.0.3");  // the broadest of the newest
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "22.04", {})).reason ==
        "the newest long-term-support stack (driver 580.173.02, R580 LTS, CUDA 13.0.3) that supports ubuntu "
        "22.04 "
        "and no known GPU");
  // The boards decide too: the stack's driver must run every known board (GH200 needs the open modules, so a
  // Volta + GH200 host has no stack).
  CHECK(m::ChooseDefaultStack(Host("ubuntu", "22.04", {"hopper"}, {"0x2342"})).name ==
        "hopper-r580.173.02-cuda13.0.3");
  CHECK_THROWS_AS(m::ChooseDefaultStack(Host("ubuntu", "22.04", {"volta", "hopper"}, {"0x1db1", "0x2342"})),
                  gp::Error);
  try {
    m::ChooseDefaultStack(Host("ubuntu", "20.04", {"hopper"}));
    FAIL("expected an error");
  } catch (const gp::Error& e) {
    CHECK(e.code() == gp::kExitUsage);
    CHECK(std::string(e.what()) ==
          "no embedded stack supports ubuntu 20.04 with hopper GPUs (embedded: blackwell-r580-cuda13.0, "
          "blackwell-r580.173.02-cuda13.0.3, blackwell-r580.173.02-cuda13.0.3-nvlsm, "
          "blackwell-r595.91.07-cuda13.2.2, blackwell-r595.91.07-cuda13.2.2-nvlsm, hopper-r580-cuda13.0, "
          "hopper-r580.173.02-cuda13.0.3, hopper-r595.91.07-cuda13.2.2, "
          "ubuntu22.04-r535-cuda12.2, volta-r580-cuda12.9, volta-r580.173.02-cuda12.9.1); choose one with "
          "--manifest");
  }
}

TEST_CASE("RanksAbove: long-term support first, then the newest CUDA, then the newest driver", "[manifest]") {
  auto load = [](const char* n) { return m::LoadStack(n, m::LoadContext{}); };
  const m::Stack old_hopper = load("hopper-r580-cuda13.0"), hopper = load("hopper-r580.173.02-cuda13.0.3"),
                 volta = load("volta-r580.173.02-cuda12.9.1");
  CHECK(m::RanksAbove(hopper, old_hopper));
  CHECK_FALSE(m::RanksAbove(old_hopper, hopper));
  CHECK(m::RanksAbove(hopper, volta));      // CUDA 13.0.3 over 12.9.1
  CHECK(m::RanksAbove(old_hopper, volta));  // CUDA before the driver
  m::Stack production = hopper;             // a newer branch that is not long-term support ranks below
  production.driver.branch = 595;
  production.driver.version.version = gp::Version::Must("595.71.05");
  production.cuda.version.version = gp::Version::Must("13.2.1");
  CHECK(m::RanksAbove(old_hopper, production));
  CHECK_FALSE(m::RanksAbove(hopper, hopper));
}

TEST_CASE("the current stacks: R580 at 580.173.02, CUDA 13.0.3 / 12.9.1, the sourced libraries",
          "[manifest]") {
  const m::Stack h = m::LoadStack("hopper-r580.173.02-cuda13.0.3", m::LoadContext{});
  CHECK(h.extends_chain == std::vector<std::string>{"hopper-r580-cuda13.0"});
  CHECK(h.driver.version.version->str() == "580.173.02");
  CHECK(h.driver.flavour == "open");
  CHECK(h.driver.end_of_life == "2028-06");
  CHECK(h.cuda.version.version->str() == "13.0.3");
  CHECK(h.cudnn.version.version->str() == "9.25.1.1");
  CHECK(h.nccl.version.version->str() == "2.28.9");
  CHECK(h.container_toolkit.version.version->str() == "1.20.0");
  CHECK(h.image.ref == "nvcr.io/nvidia/pytorch:25.12-py3");
  CHECK(h.repositories.size() == 4);  // the same repositories and keys as the stack it succeeds
  const m::Stack b = m::LoadStack("blackwell-r580.173.02-cuda13.0.3", m::LoadContext{});
  CHECK(b.architectures == std::vector<std::string>{"blackwell"});
  CHECK(b.boards_excluded.empty());  // 580.173.02 lists every Blackwell board the older stack left out
  CHECK(b.driver.version.version->str() == "580.173.02");
  const m::Stack v = m::LoadStack("volta-r580.173.02-cuda12.9.1", m::LoadContext{});
  CHECK(v.driver.flavour == "proprietary");
  CHECK(v.driver.version.version->str() == "580.173.02");
  CHECK(v.cuda.version.version->str() == "12.9.1");
  CHECK(v.cudnn.version.version->str() == "9.10.2.21");  // the last cuDNN whose CUDA 12 build lists Volta
  CHECK(v.nccl.version.version->str() == "2.30.7");
  // The stacks they succeed stay embedded as they were (tests/manifest/digest_test.cc holds their content).
  CHECK(m::LoadStack("hopper-r580-cuda13.0", m::LoadContext{}).driver.version.version->str() == "580.95.05");
}

TEST_CASE("ChooseDefaultStack builds only the stacks that could win, and chooses as visiting them all would",
          "[manifest]") {
  // The rule as defined: every embedded stack in name order; the first supported one of the highest rank,
  // replaced by a level one that succeeds it.
  std::vector<m::Stack> all;
  for (const auto& name : m::EmbeddedStackNames()) all.push_back(m::LoadStack(name, m::LoadContext{}));
  auto by_definition = [&](const m::HostQuery& q) {
    const m::Stack* best = nullptr;
    for (const auto& s : all) {
      if (s.legacy || !m::SupportsHost(s, q)) continue;
      if (!best || m::RanksAbove(s, *best) || m::Succeeds(s, *best)) best = &s;
    }
    return best ? best->name : std::string("(none)");
  };
  const std::vector<std::string> archs = {"",       "maxwell", "pascal", "volta",    "turing",
                                          "ampere", "ada",     "hopper", "blackwell"};
  const std::vector<std::vector<std::string>> boards = {{},         {"0x13f2"}, {"0x1db1"},
                                                        {"0x20b0"}, {"0x2330"}, {"0x2335"},
                                                        {"0x2342"}, {"0x2901"}, {"0x1db1", "0x2342"}};
  size_t hosts = 0;
  for (const auto& [id, version] : std::vector<std::pair<std::string, std::string>>{
           {"ubuntu", "22.04"}, {"ubuntu", "24.04"}, {"debian", "12"}, {"ubuntu", "20.04"}, {"", ""}})
    for (size_t a = 0; a < archs.size(); ++a)
      for (size_t b = a; b < archs.size(); ++b)
        for (const auto& pci : boards) {
          std::vector<std::string> host_archs;
          for (const auto* x : {&archs[a], &archs[b]})
            if (!x->empty()) host_archs.push_back(*x);
          const m::HostQuery q = Host(id, version, host_archs, pci);
          std::string chosen = "(none)";
          try {
            chosen = m::ChooseDefaultStack(q).name;
          } catch (const gp::Error&) {
          }
          INFO(id << " " << version << " " << archs[a] << "+" << archs[b] << " boards " << pci.size());
          CHECK(chosen == by_definition(q));
          ++hosts;
        }
  CHECK(hosts == 5 * 45 * 9);
}
