// The file half of the host (host/files.h): one reader per fact, shared by doctor's probe and the plan, so
// the two judge one value. A daemon started by hand is the case that went wrong before: doctor counted it as
// persistence, the plan did not enable it.
#include "host/files.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "apply/harness.h"
#include "layers/check.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "support/plan_host.h"

using namespace gp;

namespace {

struct Tree {
  test::TempRoot root;
  manifest::Stack stack = manifest::LoadStack("hopper-r580-cuda13.0", manifest::LoadContext{});
  explicit Tree(const std::string& fixture) {
    std::filesystem::copy(
        std::string(GP_FIXTURES) + "/hosts/" + fixture, root.path(),
        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  probe::HostFacts Probe() {
    probe::ProbeEnv env;
    env.fs = &root.fs();
    env.compat = &manifest::EmbeddedCompat();
    return probe::ProbeHost(env);
  }
};

const verdict::Finding* Code(const verdict::LayerReport& r, const std::string& code) {
  for (const auto& f : r.findings)
    if (f.code == code) return &f;
  return nullptr;
}

const plan::Step* StepOf(const plan::Plan& p, const std::string& id) {
  for (const auto& s : p.steps)
    if (s.id == id) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("file half: doctor and plan judge nvidia-persistenced by one value", "[host][persistenced]") {
  Tree t("healthy-h100");
  std::filesystem::remove(t.root.path() +
                          "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service");
  probe::HostFacts facts = t.Probe();
  CHECK_FALSE(facts.driver.persistenced_enabled);
  // Started by hand: running (the live half's fact), its unit not enabled.
  facts.driver.persistenced_running = true;
  const layers::CheckInput doctor{t.stack, manifest::EmbeddedCompat(), facts, "2026-12-01", ""};
  const verdict::LayerReport report = layers::CheckDriver(doctor);  // kept: the finding points into it
  const verdict::Finding* warned = Code(report, "driver.persistenced");
  REQUIRE(warned != nullptr);
  CHECK(warned->message.find("running but not enabled") != std::string::npos);
  plan::PlanInput in;
  in.stack = &t.stack;
  in.facts = &facts;
  const plan::Plan first = test::PlanHost(in, t.root.fs());
  const plan::Step* enable = StepOf(first, "driver.persistenced");
  REQUIRE(enable != nullptr);
  CHECK(enable->actions.at(0).argv ==
        std::vector<std::string>{"systemctl", "enable", "nvidia-persistenced.service"});

  // Enabled for another target than multi-user.target: enabled for both, so neither asks for it.
  t.root.Symlink("/lib/systemd/system/nvidia-persistenced.service",
                 "/etc/systemd/system/graphical.target.wants/nvidia-persistenced.service");
  facts = t.Probe();
  facts.driver.persistenced_running = true;
  CHECK(facts.driver.persistenced_enabled);
  const layers::CheckInput again{t.stack, manifest::EmbeddedCompat(), facts, "2026-12-01", ""};
  CHECK(Code(layers::CheckDriver(again), "driver.persistenced") == nullptr);
  CHECK(StepOf(test::PlanHost(in, t.root.fs()), "driver.persistenced") == nullptr);
}

TEST_CASE("file half: enabled is a link in any target's .wants or .requires directory", "[host]") {
  test::TempRoot root;
  root.Write("/etc/systemd/system/multi-user.target.wants/a.service", "");
  root.Write("/etc/systemd/system/graphical.target.wants/b.service", "");
  root.Write("/etc/systemd/system/multi-user.target.requires/c.service", "");
  root.Write("/etc/systemd/system/c.service.d/override.conf", "");  // a drop-in: no unit enabled
  root.Write("/lib/systemd/system/d.service", "");                  // installed, not enabled
  const plan::HostState s = host::ReadRebootState(root.fs());
  const probe::HostFacts none;
  const plan::HostState full = host::ReadFiles(root.fs(), manifest::Stack{}, none, host::Reads{});
  for (const char* unit : {"a.service", "b.service", "c.service"}) CHECK(full.UnitEnabled(unit));
  CHECK_FALSE(full.UnitEnabled("override.conf"));
  CHECK_FALSE(full.UnitEnabled("d.service"));
  CHECK(s.wanted_units.empty());  // the reboot check reads no units
}

TEST_CASE("file half: the loaded module, nouveau and a pending reboot have one reader each", "[host]") {
  test::TempRoot root;
  root.Write("/sys/module/nvidia/version", "580.95.05\n");  // no /proc/driver/nvidia/version
  root.Write("/sys/module/nouveau/refcnt", "1\n");
  root.Write("/run/reboot-required", "");  // no /var/run in the tree: the probe and the plan still agree
  probe::ProbeEnv env;
  env.fs = &root.fs();
  env.compat = &manifest::EmbeddedCompat();
  const probe::HostFacts facts = probe::ProbeHost(env);
  const plan::HostState s = host::ReadRebootState(root.fs());
  CHECK(facts.driver.module.loaded);
  CHECK(s.loaded_module == std::optional<std::string>(facts.driver.module.version));
  CHECK(facts.driver.nouveau_loaded == s.nouveau_loaded);
  CHECK(s.nouveau_loaded);
  CHECK(facts.driver.nouveau_blacklisted == s.nouveau_blacklisted);
  CHECK(facts.reboot_required);
  CHECK(s.reboot_required_file);
}

TEST_CASE("file half: the layer table's rows declare what is read for them", "[host]") {
  manifest::Stack stack = test::TestStack();
  stack.container_toolkit.enabled = true;
  probe::HostFacts facts = test::BareHost();
  facts.fabric.platform = "hgx-blackwell";
  const host::Reads reads = layers::HostReads(stack, facts);
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  CHECK(has(reads.kernel_packages, "linux-headers-5.15.0-105-generic"));        // driver: DKMS needs them
  CHECK(has(reads.kernel_packages, "linux-modules-extra-5.15.0-105-generic"));  // fabricmanager: ib_umad
  CHECK(has(reads.files, "/etc/modules-load.d/gpuprep-ib_umad.conf"));
  CHECK(has(reads.files, "/etc/nvidia-container-runtime/config.toml"));
  // Not HGX Blackwell: the fabric manager's row asks nothing.
  facts.fabric.platform.clear();
  const host::Reads plain = layers::HostReads(stack, facts);
  CHECK_FALSE(has(plain.files, "/etc/modules-load.d/gpuprep-ib_umad.conf"));
  CHECK_FALSE(has(plain.kernel_packages, "linux-modules-extra-5.15.0-105-generic"));
}
