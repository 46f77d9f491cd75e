// The host state planning reads, as one value: the one dpkg database reader (status file and updates/
// journal) shared by the probe and the package state, the file half of the host host/files.h reads, and
// planning functions that take no Fs.
#include "plan/host_state.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <type_traits>

#include "apply/harness.h"
#include "apt/dpkg_status.h"
#include "apt/preferences.h"
#include "docker/daemon_json.h"
#include "host/files.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "plan/layer_plan.h"
#include "plan/planner.h"
#include "probe/probe.h"
#include "probe/state.h"

using namespace gp;

namespace {

// Planning takes values only: neither its input nor a layer's context carries an Fs.
template <class T, class = void>
struct HasFs : std::false_type {};
template <class T>
struct HasFs<T, std::void_t<decltype(std::declval<T>().fs)>> : std::true_type {};
static_assert(!HasFs<plan::PlanInput>::value, "PlanInput carries values, not the Fs");
static_assert(!HasFs<plan::LayerContext>::value, "a layer's plan reads values, not the Fs");
static_assert(std::is_same_v<decltype(&layers::BuildPlan), plan::Plan (*)(const plan::PlanInput&)>);
static_assert(std::is_same_v<decltype(&plan::RebootReasons),
                             std::vector<std::string> (*)(const plan::HostState&, const manifest::Stack&)>);

const std::string kStatus =
    "Package: nvidia-driver-535\nStatus: hold ok installed\nVersion: 535.129.03-1\n\n"
    "Package: nvidia-dkms-535\nStatus: install ok installed\nVersion: 535.129.03-1\n\n"
    "Package: libcudnn8\nStatus: install ok installed\nVersion: 8.9.7.29-1+cuda12.2\n\n"
    "Package: libnccl2\nStatus: install ok half-installed\nVersion: 2.18.3-1+cuda12.2\n\n";

}  // namespace

TEST_CASE("dpkg database: the status file, then the updates/ journal in numeric order", "[plan][dpkg]") {
  test::TempRoot root;
  root.Write("/var/lib/dpkg/status", kStatus);
  // 0010 after 0002 (numeric, as dpkg applies them); a file with no record; a name that is no journal file.
  root.Write("/var/lib/dpkg/updates/0010",
             "Package: libcudnn8\nStatus: install ok half-configured\nVersion: 8.9.7.29-1+cuda12.2\n\n");
  root.Write("/var/lib/dpkg/updates/0002",
             "Package: libcudnn8\nStatus: install ok installed\nVersion: 8.9.7.29-1+cuda12.1\n\n"
             "Package: nvidia-dkms-535\nStatus: deinstall ok not-installed\nVersion: 535.129.03-1\n\n");
  root.Write("/var/lib/dpkg/updates/0011", "");
  root.Write("/var/lib/dpkg/updates/tmp.i", "Package: ignored\nStatus: install ok installed\nVersion: 1\n\n");
  const probe::DpkgDatabase db = probe::ReadDpkgDatabase(root.fs());
  CHECK(db.status_found);
  CHECK(db.journal_pending());
  CHECK(db.journal_files == std::vector<std::string>{"/var/lib/dpkg/updates/0002",
                                                     "/var/lib/dpkg/updates/0010",
                                                     "/var/lib/dpkg/updates/0011"});
  CHECK(db.empty_journal == std::vector<std::string>{"/var/lib/dpkg/updates/0011"});
  REQUIRE(db.entries.size() == 7);
  CHECK(db.journal_from == 4);
  CHECK(db.entries[4].version == "8.9.7.29-1+cuda12.1");
  CHECK(db.entries[6].status == "install ok half-configured");

  SECTION("the package state: holds, half-installed, and the journal superseding the status file") {
    const plan::PackageState s = plan::PackageStateOf(db, std::nullopt);
    CHECK(s.Held("nvidia-driver-535"));
    REQUIRE(s.Installed("nvidia-driver-535"));
    CHECK(*s.Installed("nvidia-driver-535") == "535.129.03-1");
    CHECK(s.Installed("libnccl2") == nullptr);  // half-installed
    CHECK_FALSE(s.dpkg.at("libnccl2").installed);
    CHECK(s.Installed("nvidia-dkms-535") == nullptr);  // removed in the journal
    CHECK(s.Installed("libcudnn8") == nullptr);        // the newest record: half-configured
    CHECK(s.dpkg.at("libcudnn8").version == "8.9.7.29-1+cuda12.2");
    CHECK(s.dpkg.count("ignored") == 0);
    CHECK(s.preferences.empty());
  }
  SECTION("apt's entries of named packages come from the same reader") {
    auto m = apt::ReadDpkgStatus(root.fs(), {"nvidia-driver-535", "nvidia-dkms-535", "absent"});
    CHECK(m.size() == 2);
    CHECK(m.at("nvidia-driver-535").held);
    CHECK_FALSE(m.at("nvidia-dkms-535").installed);
  }
  SECTION("the probe's packages and interrupted dpkg come from the same reader") {
    probe::ProbeEnv env;
    env.fs = &root.fs();
    env.compat = &manifest::EmbeddedCompat();
    const probe::HostFacts facts = probe::ProbeHost(env);
    CHECK(facts.packages.count("nvidia-driver-535") == 1);
    CHECK(facts.packages.at("nvidia-driver-535").held);
    CHECK(facts.packages.count("nvidia-dkms-535") == 0);  // removed in the journal
    const auto& i = facts.dpkg_interrupted;
    for (const char* what : {"libnccl2", "libcudnn8", "nvidia-dkms-535", "/var/lib/dpkg/updates/0011"})
      CHECK(std::find(i.begin(), i.end(), what) != i.end());
    CHECK(std::find(i.begin(), i.end(), "nvidia-driver-535") == i.end());
  }
}

TEST_CASE("dpkg database: no status file, no journal", "[plan][dpkg]") {
  test::TempRoot root;
  const probe::DpkgDatabase db = probe::ReadDpkgDatabase(root.fs());
  CHECK_FALSE(db.status_found);
  CHECK_FALSE(db.journal_pending());
  CHECK(db.entries.empty());
}

TEST_CASE("host state: one value read before planning", "[plan][host_state]") {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  root.Write("/var/lib/dpkg/status", kStatus);
  root.Write("/var/lib/dpkg/updates/0001", "");
  root.Write(apt::kPreferencesPath, "# gpuprep: stack s\n");
  root.Write("/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service", "");
  root.Write("/etc/systemd/system/graphical.target.wants/nvidia-fabricmanager.service", "");
  root.Write("/etc/systemd/system/docker.service.requires/containerd.service", "");  // RequiredBy=
  root.Write("/etc/systemd/system/docker.service.d/override.conf", "");  // a drop-in, not a target's links
  root.Write("/sys/module/nvidia/version", "535.129.03\n");
  root.Write("/var/run/reboot-required", "");
  root.Write("/etc/modprobe.d/nouveau.conf", "blacklist nouveau\n");
  root.Write("/sys/module/nouveau/refcnt", "0\n");
  root.Write("/etc/nvidia-container-runtime/config.toml", "[nvidia-container-runtime]\nmode = \"cdi\"\n");
  root.Write("/etc/docker/daemon.json", "{}\n");
  const plan::HostState s = host::ReadFiles(root.fs(), stack, facts, layers::HostReads(stack, facts));
  CHECK(s.dpkg_journal);
  CHECK(s.packages.Held("nvidia-driver-535"));
  CHECK(s.packages.preferences == "# gpuprep: stack s\n");
  CHECK(s.UnitEnabled("nvidia-persistenced.service"));
  CHECK(s.UnitEnabled("nvidia-fabricmanager.service"));  // any target's wants
  CHECK(s.UnitEnabled("containerd.service"));
  CHECK_FALSE(s.UnitEnabled("docker.service"));
  CHECK_FALSE(s.UnitEnabled("override.conf"));
  CHECK(s.loaded_module == std::optional<std::string>("535.129.03"));
  CHECK(s.reboot_required_file);
  CHECK(s.nouveau_blacklisted);
  CHECK(s.nouveau_loaded);
  // Files a layer's row declared (the container toolkit's config), as they are; undeclared files are not
  // read.
  CHECK(s.File("/etc/nvidia-container-runtime/config.toml") ==
        std::optional<std::string>("[nvidia-container-runtime]\nmode = \"cdi\"\n"));
  CHECK_FALSE(s.File("/etc/modprobe.d/nouveau.conf"));
  CHECK(s.daemon_json == std::optional<std::string>("{}\n"));
  CHECK(std::string(plan::kBackedUpFiles[0]) == docker::kDaemonJsonPath);
  for (const char* path : plan::kBackedUpFiles) CHECK(s.write_targets.count(path) == 1);
  for (const auto* r : plan::AptRepositoriesFor(stack, facts)) {
    REQUIRE(s.repositories.count(r->list_path) == 1);
    CHECK_FALSE(s.repositories.at(r->list_path).keyring);
    CHECK_FALSE(s.repositories.at(r->list_path).list);
  }
  // The reboot check is a function of the value.
  const auto reasons = plan::RebootReasons(s, stack);
  CHECK(std::find(reasons.begin(), reasons.end(), "/var/run/reboot-required exists") != reasons.end());
  CHECK(std::find(reasons.begin(), reasons.end(), "nouveau is blacklisted but still loaded") !=
        reasons.end());
  // The reboot state is the same read, without the stack's parts.
  const plan::HostState r = host::ReadRebootState(root.fs());
  CHECK(r.packages.dpkg.size() == s.packages.dpkg.size());
  CHECK(r.loaded_module == s.loaded_module);
  CHECK(r.wanted_units.empty());
}

TEST_CASE("host state: a plan made from it changes when the host does, once read again",
          "[plan][host_state]") {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  stack.repositories[0].keyring_sha256 = std::string(64, 'a');
  probe::HostFacts facts = test::BareHost();
  plan::PlanInput in;
  in.stack = &stack;
  in.facts = &facts;
  const plan::HostState before = host::ReadFiles(root.fs(), stack, facts, layers::HostReads(stack, facts));
  in.host = &before;
  const plan::Plan first = layers::BuildPlan(in);
  root.Write("/var/lib/dpkg/status", test::InstalledStackStatus(stack, true));
  // The value read before the change still plans the host as it was; read again, the plan sees the
  // packages.
  auto kind = [](const plan::Plan& p, const std::string& name) {
    for (const auto& l : p.layers)
      if (l.name == name) return l.kind;
    return plan::LayerDecision::Kind::kNotApplicable;
  };
  CHECK(kind(layers::BuildPlan(in), "cudnn") == plan::LayerDecision::Kind::kInstall);
  const plan::HostState after = host::ReadFiles(root.fs(), stack, facts, layers::HostReads(stack, facts));
  in.host = &after;
  const plan::Plan second = layers::BuildPlan(in);
  CHECK(kind(first, "cudnn") == plan::LayerDecision::Kind::kInstall);
  CHECK(kind(second, "cudnn") == plan::LayerDecision::Kind::kNone);
}
