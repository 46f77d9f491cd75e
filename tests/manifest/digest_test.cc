// A shipped stack never changes: every embedded stack's pinned content hashes to its line in
// manifests/shipped-stacks.lock, and every stack the lock names is still embedded. Editing a shipped stack's
// pins in place fails here; only a new stack under a new name (and a new lock line) passes.
#include "manifest/digest.h"

#include <catch2/catch.hpp>

#include "manifest/loader.h"
#include "util/error.h"

namespace m = gp::manifest;

TEST_CASE("every embedded stack is in the lock with the hash of its pinned content", "[manifest][digest]") {
  const auto& lock = m::ShippedStacks();
  REQUIRE(!lock.empty());
  for (const auto& name : m::EmbeddedStackNames()) {
    INFO(name);
    const m::Stack s = m::LoadStack(name, m::LoadContext{});
    const std::string computed = m::ComputeContentHash(s);
    const m::ShippedStack* entry = nullptr;
    for (const auto& e : lock)
      if (e.name == name) entry = &e;
    // A new stack needs its line; a changed one needs a new name. The message gives the line to add.
    INFO("lock line for its content: " << name << " " << computed);
    REQUIRE(entry != nullptr);
    CHECK(entry->hash == computed);
    CHECK(m::ContentHash(s) == computed);
  }
}

TEST_CASE("a shipped stack stays embedded (old stacks are kept for the hosts that run them)",
          "[manifest][digest]") {
  const auto names = m::EmbeddedStackNames();
  for (const auto& e : m::ShippedStacks()) {
    INFO(e.name);
    CHECK(std::find(names.begin(), names.end(), e.name) != names.end());
  }
}

TEST_CASE("the content hash moves with every pin and with nothing else", "[manifest][digest]") {
  const m::Stack base = m::LoadStack("hopper-r580-cuda13.0", m::LoadContext{});
  const std::string h = m::ComputeContentHash(base);
  CHECK(m::IsContentHash(h));

  m::Stack moved = base;  // where things come from, what it claims, descriptions: not content
  moved.repositories.front().url = "http://mirror.example/cuda/";
  moved.architectures = {"hopper"};
  moved.description = "other";
  moved.legacy = true;
  moved.driver.end_of_life = "2030-01";
  moved.image.mirror = "registry.example:5000/nvcr";
  moved.workload.min_cpus_per_gpu = 99;
  CHECK(m::ComputeContentHash(moved) == h);

  m::Stack driver = base;
  driver.driver.version.version = gp::Version::Must("580.173.02");
  CHECK(m::ComputeContentHash(driver) != h);
  m::Stack nccl = base;
  nccl.nccl.packages.push_back({"libnccl-tests", "", ""});
  CHECK(m::ComputeContentHash(nccl) != h);
  m::Stack image = base;
  image.image.digest = "sha256:" + std::string(64, 'a');
  CHECK(m::ComputeContentHash(image) != h);
  m::Stack docker = base;
  docker.docker.gpu_access = "cdi";
  CHECK(m::ComputeContentHash(docker) != h);

  // An embedded stack's hash is its lock line; the site file that only moves its repositories has the same.
  // Hopper and Blackwell stacks differ only in what they claim: the same content, told apart by name and
  // extends.
  CHECK(m::EmbeddedStackWithHash(h, {"hopper-r580-cuda13.0"}) ==
        std::optional<std::string>("hopper-r580-cuda13.0"));
  CHECK(m::EmbeddedStackWithHash(h, {"x", "blackwell-r580-cuda13.0"}) ==
        std::optional<std::string>("blackwell-r580-cuda13.0"));
  CHECK(m::EmbeddedIdentity(base) == std::optional<std::string>("hopper-r580-cuda13.0"));
  m::Stack site = moved;  // a site file extending the stack, under its own name
  site.name = "site-hopper";
  site.source = "/etc/gpuprep/site.yaml";
  site.extends_chain = {"hopper-r580-cuda13.0"};
  CHECK(m::EmbeddedIdentity(site) == std::optional<std::string>("hopper-r580-cuda13.0"));
  CHECK(!m::EmbeddedStackWithHash(m::ComputeContentHash(driver)));
}

TEST_CASE("PinChanges lists what a move changes, field by field", "[manifest][digest]") {
  const m::Stack a = m::LoadStack("hopper-r580-cuda13.0", m::LoadContext{});
  m::Stack b = a;
  b.driver.version.version = gp::Version::Must("580.173.02");
  b.cudnn.enabled = false;
  const auto changes = m::PinChanges(a, b);
  REQUIRE(changes.size() == 6);  // driver.version, cudnn.enabled, and the four cudnn fields it no longer has
  CHECK(changes[0].field == "driver.version");
  CHECK(changes[0].from == "580.95.05");
  CHECK(changes[0].to == "580.173.02");
  CHECK(changes[1].field == "cudnn.enabled");
  CHECK(changes[1].to == "false");
  CHECK(changes[2].to.empty());
  CHECK(m::PinChanges(a, a).empty());
}

TEST_CASE("the lock's lines are NAME sha256:HEX, each name once", "[manifest][digest]") {
  const std::string h = "sha256:" + std::string(64, '0');
  CHECK(m::ParseShippedStacks("# comment\n\nx " + h + "\n", "l").size() == 1);
  CHECK_THROWS_WITH(m::ParseShippedStacks("x sha256:00\n", "l"),
                    "l:1:1: expected \"NAME sha256:<64 hex>\", got \"x sha256:00\"");
  CHECK_THROWS_WITH(m::ParseShippedStacks("x " + h + "\nx " + h + "\n", "l"),
                    "l:2:1: stack x is listed twice");
  CHECK_THROWS(m::ParseShippedStacks("bad/name " + h + "\n", "l"));
}
