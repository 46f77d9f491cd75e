// Who owns gpuprep's pins and holds (plan/pins.h): `apply --only L` (and `--skip`) changes no hold or pin of
// another layer, for every layer name; a pin is released only when no layer of the stack still pins it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "docker/daemon_json.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/pins.h"
#include "plan/plan_queries.h"
#include "plan/planner.h"
#include "support/plan_host.h"
#include "util/strings.h"

using namespace gp;
using gp::test::Find;

namespace {

// A converged host with a package in every apt layer: driver, fabric manager (NVSwitches), CUDA, cuDNN,
// NCCL, Docker's own engine pinned (docker-ce) and the container toolkit, each held and pinned by gpuprep
// with its layer named, as a full apply leaves it.
struct Host {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  plan::PlanInput in;
  apt::Index index;
  std::map<std::string, std::vector<std::string>> layer_packages;  // layer -> its packages
  std::map<std::string, std::string> versions;                     // package -> installed version

  Host() {
    stack.repositories[0].keyring_sha256 = std::string(64, 'a');
    stack.container_toolkit.enabled = true;
    stack.container_toolkit.version = test::Pin("1.19.1");
    for (const char* n : {"nvidia-container-toolkit", "nvidia-container-toolkit-base",
                          "libnvidia-container-tools", "libnvidia-container1"})
      stack.container_toolkit.packages.push_back({n, "", ""});
    stack.docker.present = true;
    stack.docker.engine = "docker-ce";
    stack.docker.packages = {{"docker-ce", "", "28.3.2"}};
    facts.nvswitch_count = 4;
    auto add = [this](const std::string& layer, const std::vector<manifest::AptPackage>& pkgs,
                      const char* version) {
      for (const auto& p : pkgs) {
        layer_packages[layer].push_back(p.name);
        versions[p.name] = version ? version : p.version;
      }
    };
    add("driver", stack.driver.packages, nullptr);
    add("fabricmanager", stack.driver.fabricmanager_packages, nullptr);
    add("cuda", stack.cuda.packages, nullptr);
    add("cudnn", stack.cudnn.packages, nullptr);
    add("nccl", stack.nccl.packages, nullptr);
    add("docker", stack.docker.packages, "5:28.3.2-1~ubuntu.22.04~jammy");
    add("container_toolkit", stack.container_toolkit.packages, "1.19.1-1");
    std::string packages = test::RepoPackages(stack);
    for (const char* extra : {"docker-ce", "nvidia-container-toolkit", "nvidia-container-toolkit-base",
                              "libnvidia-container-tools", "libnvidia-container1"})
      packages +=
          "Package: " + std::string(extra) + "\nVersion: " + versions[extra] + "\nArchitecture: amd64\n\n";
    apt::ParsePackages(packages, "amd64", index);
    in.stack = &stack;
    in.facts = &facts;
    in.index = &index;  // as apply plans: with the repositories' index fetched just now
  }

  std::map<std::string, apt::Pin> Pins() const {
    std::map<std::string, apt::Pin> pins;
    for (const auto& [layer, names] : layer_packages)
      for (const auto& n : names) pins[n] = {versions.at(n), {layer}};
    return pins;
  }

  void Converge(const std::set<std::string>& unheld = {}) {
    std::string status;
    for (const auto& [name, version] : versions)
      status += test::DpkgStanza(name, version, !unheld.count(name));
    root.Write("/var/lib/dpkg/status", status);
    root.Write(stack.repositories[0].keyring_path, "key");
    root.Write(stack.repositories[0].list_path, apt::ListFileContents(stack.repositories[0], stack.name));
    root.Write(apt::kPreferencesPath, apt::PreferencesContents(stack.name, Pins()));
    root.Write("/etc/modprobe.d/blacklist-nouveau.conf", plan::kNouveauBlacklist);
    root.Write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
    for (const char* unit : {"nvidia-persistenced.service", "nvidia-fabricmanager.service", "docker.service"})
      root.Symlink(std::string("/lib/systemd/system/") + unit,
                   std::string("/etc/systemd/system/multi-user.target.wants/") + unit);
    root.Write("/etc/docker/daemon.json",
               docker::EditDaemonJson(std::nullopt, docker::DaemonJsonWant{}).text);
    facts.docker.engine_reachable = true;  // the engine runs, with the nvidia runtime registered
    facts.docker.version = "28.3.2";
    facts.docker.socket = "/var/run/docker.sock";
    facts.docker.containers_running = 0;
    facts.docker.runtimes = {"nvidia", "runc"};
    facts.driver.nouveau_loaded = false;
    facts.driver.kernel_headers = true;
    facts.driver.module.loaded = true;
    facts.driver.module.version = "535.129.03";
    facts.driver.persistenced_enabled = true;
  }
};

// The stanza of `name` in a preferences file ("" when it has none).
std::string Stanza(const std::string& text, const std::string& name) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("\n\n", pos);
    if (end == std::string::npos) end = text.size();
    const std::string stanza = text.substr(pos, end - pos);
    if (stanza.find("Package: " + name + "\n") != std::string::npos) return stanza;
    pos = end + 2;
  }
  return "";
}

// The package words of a step's apt-mark/apt-get argv (after "--").
std::vector<std::string> Words(const plan::Plan& p, const std::string& id) {
  const auto* s = Find(p, id);
  if (!s || s->actions.empty()) return {};
  const auto& argv = s->actions[0].argv;
  auto dd = std::find(argv.begin(), argv.end(), "--");
  return dd == argv.end() ? std::vector<std::string>{} : std::vector<std::string>(dd + 1, argv.end());
}

std::string NameOf(const std::string& word) { return word.substr(0, word.find('=')); }

}  // namespace

TEST_CASE("the host of these tests is converged: a full apply plans nothing", "[plan][ownership]") {
  Host h;
  h.Converge();
  auto p = test::PlanHost(h.in, h.root.fs());
  INFO(Join(test::Ids(p), ", "));
  CHECK(p.blockers.empty());
  CHECK(p.steps.empty());
  CHECK(p.left_alone.empty());
}

TEST_CASE("apply --only L changes no hold or pin of another layer, for every layer name",
          "[plan][ownership]") {
  for (const auto& layer : layers::ApplyLayers()) {
    for (bool needs_work : {false, true}) {
      INFO("--only " << layer << (needs_work ? ", its packages not held" : ", converged"));
      Host h;
      std::set<std::string> unheld;
      if (needs_work)
        for (const auto& n : h.layer_packages[layer]) unheld.insert(n);
      h.Converge(unheld);
      const std::string before = h.root.Read(apt::kPreferencesPath);
      h.in.only = {layer};
      auto p = test::PlanHost(h.in, h.root.fs());
      INFO("steps: " << Join(test::Ids(p), ", "));
      CHECK(p.blockers.empty());
      CHECK(Find(p, "apt.unhold") == nullptr);
      for (const auto& w : Words(p, "apt.hold")) CHECK(unheld.count(NameOf(w)) == 1);
      CHECK(Words(p, "apt.install").empty());
      if (const auto* pin = Find(p, "apt.pin")) {
        const std::string& after = pin->actions[0].contents;
        for (const auto& [other, names] : h.layer_packages)
          for (const auto& n : names) {
            INFO(other << ": " << n);
            CHECK(Stanza(after, n) == Stanza(before, n));
          }
      }
      std::vector<std::string> alone;
      for (const auto& l : layers::ApplyLayers())
        if (l != layer && l != "image") alone.push_back(l);  // the stack names no image: n/a, not left alone
      CHECK(p.left_alone == alone);
      if (needs_work && !h.layer_packages[layer].empty())
        CHECK(Words(p, "apt.hold").size() == h.layer_packages[layer].size());
    }
  }
}

TEST_CASE("apply --skip L leaves L's holds and pins as they are", "[plan][ownership]") {
  for (const auto& layer : layers::ApplyLayers()) {
    INFO("--skip " << layer);
    Host h;
    std::set<std::string> unheld;  // every other layer needs its holds back
    for (const auto& [l, names] : h.layer_packages)
      if (l != layer) unheld.insert(names.begin(), names.end());
    h.Converge(unheld);
    const std::string before = h.root.Read(apt::kPreferencesPath);
    h.in.skip = {layer};
    auto p = test::PlanHost(h.in, h.root.fs());
    CHECK(p.blockers.empty());
    CHECK(Find(p, "apt.unhold") == nullptr);
    for (const auto& w : Words(p, "apt.hold")) CHECK(unheld.count(NameOf(w)) == 1);
    for (const auto& n : h.layer_packages[layer])
      if (const auto* pin = Find(p, "apt.pin"))
        CHECK(Stanza(pin->actions[0].contents, n) == Stanza(before, n));
  }
}

TEST_CASE("pins: released only when no layer still owns them; conflicts and old files", "[plan][ownership]") {
  using apt::Pin;
  const std::map<std::string, Pin> want = {{"libcudnn9", {"9.13.0.50-1", {"cudnn"}}}};
  SECTION("a stack change without --only: what the new stack does not pin is released") {
    auto d = plan::DecidePins(
        want, {{"libcudnn9", {"9.12.0.46-1", {"cudnn"}}}, {"cuda-drivers", {"535.129.03-1", {"driver"}}}},
        {});
    CHECK(d.file == want);
    CHECK(d.released == std::vector<std::string>{"cuda-drivers", "libcudnn9"});
    CHECK(d.conflicts.empty());
  }
  SECTION("--only cudnn: the driver's pin stays, named as before, and is not the run's to hold") {
    auto d = plan::DecidePins(want, {{"cuda-drivers", {"535.129.03-1", {"driver"}}}}, {"driver", "cuda"});
    CHECK(d.file.at("cuda-drivers") == Pin{"535.129.03-1", {"driver"}});
    CHECK(d.managed == std::set<std::string>{"libcudnn9"});
    CHECK(d.released.empty());
  }
  SECTION("a package two layers pin at the same version keeps both names") {
    auto d = plan::DecidePins(want, {{"libcudnn9", {"9.13.0.50-1", {"cudnn", "image"}}}}, {"image"});
    CHECK(d.file.at("libcudnn9") == Pin{"9.13.0.50-1", {"cudnn", "image"}});
    CHECK(d.released.empty());
  }
  SECTION("a layer left alone pins it at another version: a conflict, nothing decided for it") {
    auto d = plan::DecidePins(want, {{"libcudnn9", {"9.12.0.46-1", {"cuda"}}}}, {"cuda"});
    CHECK(d.conflicts ==
          std::vector<std::string>{
              "libcudnn9 is pinned at 9.12.0.46-1 for cuda, which this run leaves alone, but cudnn "
              "needs 9.13.0.50-1"});
  }
  SECTION("a file written before layers were recorded: kept while any layer is left alone") {
    const std::map<std::string, Pin> old = {{"cuda-drivers", {"535.129.03-1", {}}},
                                            {"libcudnn9", {"9.12.0.46-1", {}}}};
    auto d = plan::DecidePins(want, old, {"driver"});
    CHECK(d.file.at("cuda-drivers") == Pin{"535.129.03-1", {}});
    CHECK(d.file.at("libcudnn9") == want.at("libcudnn9"));  // the run's own layer moves it
    CHECK(d.released == std::vector<std::string>{"libcudnn9"});
    CHECK(plan::DecidePins(want, old, {}).released == std::vector<std::string>{"cuda-drivers", "libcudnn9"});
  }
}
