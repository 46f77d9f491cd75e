// The container half of the plan (layers/docker, container_toolkit and image plan.cc): Docker installed only
// when absent and left alone when present, the toolkit's four packages pinned and held in the one transaction
// with its repository, daemon.json edited losslessly with its diff shown, reload vs restart (never silently
// over running containers), the CDI spec and runtime mode, and the image pulled pinned by digest.
#include "plan/containers.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "docker/daemon_json.h"
#include "layers/check.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "plan/plan_queries.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "probe/state.h"
#include "support/fake_engine.h"
#include "support/plan_host.h"
#include "sys/http.h"
#include "sys/process.h"
#include "util/error.h"

using namespace gp;
using gp::test::Find;
using gp::test::Ids;
using gp::test::Layer;
using gp::test::TempRoot;

namespace {

const std::string kDigest = "sha256:" + std::string(64, 'd');

struct Fixture {
  TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  plan::PlanInput in;
  Fixture() {
    stack.repositories[0].keyring_sha256 = std::string(64, 'a');
    manifest::AptRepository tk;
    tk.name = "nvidia-container-toolkit";
    tk.url = "https://nvidia.github.io/libnvidia-container/stable/deb/amd64/";
    tk.keyring_url = "https://nvidia.github.io/libnvidia-container/gpgkey";
    tk.keyring_path = "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg";
    tk.keyring_sha256 = std::string(64, 'b');
    tk.list_path = "/etc/apt/sources.list.d/nvidia-container-toolkit.list";
    stack.repositories.push_back(tk);
    stack.container_toolkit.enabled = true;
    stack.container_toolkit.version = test::Pin("1.19.1");
    // Upstream pins, as the embedded stacks write them: the revision comes from the repository's index.
    for (const char* n : {"nvidia-container-toolkit", "nvidia-container-toolkit-base",
                          "libnvidia-container-tools", "libnvidia-container1"})
      stack.container_toolkit.packages.push_back({n, "", ""});
    stack.image.ref = "nvcr.io/nvidia/pytorch:23.10-py3";
    stack.docker.present = true;
    stack.docker.packages = {{"docker.io", ""}};
    in.stack = &stack;
    in.facts = &facts;
    in.only = {"docker", "container_toolkit", "image"};
  }
  // As apply plans: with the repositories' index its preflight reads (the toolkit at 1.19.1-1 and a
  // newer 1.20.0-1 the pin must not take).
  plan::Plan Build() {
    index = apt::Index();
    std::string packages = test::RepoPackages(stack);
    for (const auto& p : stack.container_toolkit.packages)
      for (const char* v : {"1.19.1-1", "1.20.0-1"})
        packages += "Package: " + p.name + "\nVersion: " + v + "\nArchitecture: amd64\nFilename: ./" +
                    p.name + ".deb\n\n";
    apt::ParsePackages(packages, "amd64", index);
    in.index = &index;
    auto p = test::PlanHost(in, root.fs());
    in.index = nullptr;
    return p;
  }
  apt::Index index;
  // Docker installed and answering; the toolkit installed at its pins and held.
  void DockerRunning(const std::string& version = "28.3.2") {
    facts.docker.engine_reachable = true;
    facts.docker.version = version;
    facts.docker.socket = "/var/run/docker.sock";
    facts.docker.containers_running = 0;
    std::string status = test::DpkgStanza("docker.io", "24.0.7-0ubuntu2~22.04.1", false);
    root.Write("/var/lib/dpkg/status", status);
  }
  // Installed at the pin, held, and in gpuprep's apt preferences.
  void ToolkitInstalled() {
    std::string status = root.Read("/var/lib/dpkg/status");
    if (status == "<missing>") status.clear();
    std::map<std::string, apt::Pin> pins;
    for (const auto& p : stack.container_toolkit.packages) {
      status += test::DpkgStanza(p.name, "1.19.1-1");
      pins[p.name] = {"1.19.1-1", {"container_toolkit"}};
    }
    root.Write("/var/lib/dpkg/status", status);
    root.Write(apt::kPreferencesPath, apt::PreferencesContents(stack.name, pins));
  }
};

}  // namespace

TEST_CASE(
    "containers: a bare host installs Docker and the toolkit in one pinned transaction, then registers, "
    "pulls and verifies",
    "[plan][containers]") {
  Fixture f;
  auto p = f.Build();
  CHECK(Ids(p) ==
        std::vector<std::string>{"repo.cuda.key", "repo.cuda.list", "repo.nvidia-container-toolkit.key",
                                 "repo.nvidia-container-toolkit.list", "apt.update", "apt.pin", "apt.install",
                                 "apt.hold", "docker.enable", "docker.daemon-json", "docker.restart",
                                 "image.pull", "verify.docker", "verify.container_toolkit", "verify.image"});
  const auto* install = Find(p, "apt.install");
  REQUIRE(install);
  const std::string argv = sys::ShellJoin(install->actions[0].argv);
  // The toolkit resolved from the index at its upstream pin (not the newer 1.20.0-1); docker.io by name.
  CHECK(argv.find(" install -- nvidia-container-toolkit=1.19.1-1 nvidia-container-toolkit-base=1.19.1-1 "
                  "libnvidia-container-tools=1.19.1-1 libnvidia-container1=1.19.1-1 docker.io") !=
        std::string::npos);
  const std::string hold = sys::ShellJoin(Find(p, "apt.hold")->actions[0].argv);
  for (const char* n : {" nvidia-container-toolkit", " nvidia-container-toolkit-base",
                        " libnvidia-container-tools", " libnvidia-container1"})
    CHECK(hold.find(n) != std::string::npos);
  CHECK(hold.find("docker.io") == std::string::npos);  // the distribution's engine is not held
  const auto* pin = Find(p, "apt.pin");
  REQUIRE(pin);
  CHECK(pin->actions[0].contents.find("Package: nvidia-container-toolkit-base\nPin: version 1.19.1-1\n") !=
        std::string::npos);
  CHECK(Layer(p, "docker").kind == plan::LayerDecision::Kind::kInstall);
  const auto* dj = Find(p, "docker.daemon-json");
  REQUIRE(dj);
  CHECK(dj->actions[0].path == "/etc/docker/daemon.json");
  CHECK(dj->actions[0].keep_backup);
  CHECK(dj->actions[0].contents.find("\"nvidia-container-runtime\"") != std::string::npos);
  // docker.io's own postinst starts the engine, maybe before the toolkit's hook is unpacked: a restart, not a
  // reload, makes it register the GPU driver --gpus needs.
  CHECK(sys::ShellJoin(Find(p, "docker.restart")->actions[0].argv) == "systemctl restart docker.service");
  CHECK(Find(p, "docker.restart")->title ==
        "restart Docker (the toolkit's hook is new: Docker finds it only at start, for --gpus)");
  CHECK(Find(p, "docker.reload") == nullptr);
  const auto& pull = Find(p, "image.pull")->actions[0];
  CHECK(pull.kind == plan::Action::Kind::kPull);
  CHECK(pull.image == "nvcr.io/nvidia/pytorch:23.10-py3");
  // plan shows the daemon.json diff
  const std::string text = plan::RenderText(p);
  CHECK(text.find("       + {\n") != std::string::npos);
  CHECK(text.find("pull nvcr.io/nvidia/pytorch:23.10-py3 (Docker Engine API, digest recorded)") !=
        std::string::npos);
}

TEST_CASE("containers: a running engine restarts for a new toolkit hook, reloads when the hook is there",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning("20.10.24");
  auto p = f.Build();
  CHECK(Find(p, "docker.restart"));
  CHECK(Find(p, "docker.reload") == nullptr);
  f.facts.docker.containers_running = 2;
  p = f.Build();
  REQUIRE(p.blockers.size() == 1);
  CHECK(p.blockers[0] ==
        "Docker must restart (the toolkit's hook is new: Docker finds it only at start, for --gpus), which "
        "would stop 2 running container(s); run apply with --restart-docker to allow it, or stop them first");
  // The toolkit installed before: daemon.json's runtime needs only a reload.
  f.facts.docker.containers_running = 0;
  f.ToolkitInstalled();
  p = f.Build();
  CHECK(Find(p, "docker.reload"));
  CHECK(Find(p, "docker.restart") == nullptr);
  // The toolkit installed while the engine ran: it must restart to find the hook, even with nothing to write.
  f.facts.docker.started_before_hook = true;
  p = f.Build();
  REQUIRE(Find(p, "docker.restart"));
  CHECK(Find(p, "docker.restart")->title ==
        "restart Docker (it started before the toolkit's hook was installed and finds it only at start, for "
        "--gpus)");
  f.facts.docker.started_before_hook = false;
  // CDI devices need no hook: no restart for it.
  Fixture g;
  g.DockerRunning("26.1.4");
  g.stack.docker.gpu_access = "cdi";
  g.root.Write("/etc/docker/daemon.json",
               "{\"features\": {\"cdi\": true}, \"runtimes\": {\"nvidia\": {\"path\": "
               "\"nvidia-container-runtime\", \"args\": []}}}\n");
  p = g.Build();
  CHECK(Find(p, "docker.restart") == nullptr);
}

TEST_CASE("containers: an installed engine that does not answer is started first; not under --root",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning("20.10.24");
  f.facts.docker.engine_reachable = false;
  f.facts.docker.detail = "/var/run/docker.sock not found (engine not installed or not running)";
  auto p = f.Build();
  REQUIRE(Find(p, "docker.start"));
  CHECK(sys::ShellJoin(Find(p, "docker.start")->actions[0].argv) == "systemctl start docker.service");
  CHECK(Layer(p, "docker").detail ==
        "Docker 24.0.7-0ubuntu2~22.04.1 is installed but does not answer (/var/run/docker.sock not found "
        "(engine "
        "not installed or not running)): start docker.service");
  // It comes before the toolkit's daemon.json and the pull, which need it.
  auto ids = Ids(p);
  CHECK(std::find(ids.begin(), ids.end(), "docker.start") < std::find(ids.begin(), ids.end(), "image.pull"));
  f.facts.live = false;  // --root or a snapshot: the engine is never contacted, so nothing is started
  CHECK(Find(f.Build(), "docker.start") == nullptr);
}

TEST_CASE("containers: an existing engine is left alone; too old for CDI is refused", "[plan][containers]") {
  Fixture f;
  f.DockerRunning("20.10.24");
  auto p = f.Build();
  CHECK(Layer(p, "docker").kind == plan::LayerDecision::Kind::kNone);
  CHECK(Layer(p, "docker").detail.find("an existing engine is left as it is") != std::string::npos);
  CHECK(Find(p, "docker.enable") == nullptr);
  f.stack.docker.gpu_access = "cdi";
  p = f.Build();
  CHECK(Layer(p, "docker").kind == plan::LayerDecision::Kind::kRefused);
  CHECK(Layer(p, "docker").detail ==
        "Docker 20.10.24 is older than 25.0 (CDI devices need Docker 25); gpuprep leaves an existing engine "
        "alone: upgrade it, then run apply again");
  CHECK(Layer(p, "image").kind == plan::LayerDecision::Kind::kSkipped);
}

// One floor (verdict/rules.h) for the three that judge an engine: a CDI stack on Docker 24 fails doctor,
// is refused by the plan and fails verify, with the same reason; Docker 25 passes all three.
TEST_CASE("containers: Docker's floor agrees across doctor, plan and verify", "[plan][containers][docker]") {
  for (const std::string& version : std::vector<std::string>{"24.0.7", "25.0.0"}) {
    CAPTURE(version);
    const bool below = version == "24.0.7";
    Fixture f;
    f.stack.docker.gpu_access = "cdi";
    f.DockerRunning(version);
    layers::CheckInput in{f.stack, manifest::EmbeddedCompat(), f.facts};
    auto doctor = layers::CheckDocker(in);
    CHECK((doctor.status == verdict::Status::kFail) == below);
    CHECK(Layer(f.Build(), "docker").kind ==
          (below ? plan::LayerDecision::Kind::kRefused : plan::LayerDecision::Kind::kNone));
    test::FakeEngine fake(nlohmann::json{{"version", version}});
    f.facts.docker.socket = fake.socket();
    sys::RealUnixHttp http;
    apply::VerifyEnv env{nullptr, nullptr, &f.stack, &f.facts, &http};
    auto verify = layers::VerifyLayer("docker", env);
    CHECK((verify.status == verdict::Status::kFail) == below);
    if (below) {
      const std::string why = "Docker 24.0.7 is older than 25.0 (CDI devices need Docker 25)";
      CHECK(doctor.detail.rfind(why, 0) == 0);
      CHECK(Layer(f.Build(), "docker").detail.rfind(why, 0) == 0);
      CHECK(verify.detail == why);
    }
  }
}

TEST_CASE("containers: a converged host changes nothing: no write, no reload, no pull",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  f.ToolkitInstalled();
  f.root.Write("/etc/docker/daemon.json",
               R"({"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}})");
  f.facts.docker.image = {
      "nvcr.io/nvidia/pytorch:23.10-py3", true, true, kDigest, "12.2.2", "12.2.2.009", ""};
  auto p = f.Build();
  CHECK(Ids(p).empty());
  CHECK(Layer(p, "container_toolkit").kind == plan::LayerDecision::Kind::kNone);
  CHECK(Layer(p, "container_toolkit").found == "1.19.1");
  CHECK(Layer(p, "image").kind == plan::LayerDecision::Kind::kNone);
}

TEST_CASE("containers: CDI needs a restart, refused while containers run without --restart-docker",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning("26.1.4");
  f.ToolkitInstalled();
  f.stack.docker.gpu_access = "cdi";
  f.facts.docker.containers_running = 3;
  f.root.Write("/etc/docker/daemon.json", "{\"log-driver\": \"journald\"}\n");
  auto p = f.Build();
  REQUIRE(p.blockers.size() == 1);
  CHECK(
      p.blockers[0] ==
      "Docker must restart (runtimes.nvidia: added (path nvidia-container-runtime), features.cdi: absent -> "
      "true is read only at start), which would stop 3 running container(s); run apply with "
      "--restart-docker to allow it, or stop them first");
  CHECK(Find(p, "docker.restart"));
  CHECK(Find(p, "docker.reload") == nullptr);
  CHECK(Find(p, "container_toolkit.cdi"));
  CHECK(sys::ShellJoin(Find(p, "container_toolkit.cdi")->actions[0].argv) ==
        "nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml");  // 1.18+: nvidia-cdi-refresh's file
  f.in.restart_docker = true;
  p = f.Build();
  CHECK(p.blockers.empty());
  f.in.restart_docker = false;
  f.facts.docker.containers_running = 0;
  CHECK(f.Build().blockers.empty());
}

TEST_CASE("containers: a daemon.json that is not JSON stops the plan with its position",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  f.root.Write("/etc/docker/daemon.json", "{\n  \"debug\": true,,\n}\n");
  // the file as this machine sees it: under the root
  CHECK_THROWS_WITH(f.Build(),
                    Catch::StartsWith(f.root.path() + "/etc/docker/daemon.json:2:17: not valid JSON: "));
  CHECK(f.root.Read("/etc/docker/daemon.json") == "{\n  \"debug\": true,,\n}\n");
}

TEST_CASE("containers: a daemon.json over the size limit stops the plan, the file untouched",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  // 5 MB of flat keys: refused before it is parsed, at the first byte past 1 MiB (line 1, column 1048577)
  std::string big = "{";
  for (int i = 0; big.size() < 5000000; ++i)
    big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  big.back() = '}';
  f.root.Write("/etc/docker/daemon.json", big);
  CHECK_THROWS_WITH(f.Build(),
                    f.root.path() + "/etc/docker/daemon.json:1:1048577: the file is " +
                        std::to_string(big.size()) +
                        " bytes, more than the 1048576 (1 MiB) gpuprep edits; gpuprep leaves the file "
                        "as it is: shorten it by hand");
  CHECK(f.root.Read("/etc/docker/daemon.json") == big);
}

TEST_CASE("containers: a symlinked daemon.json is edited through the link; one leaving /etc is refused",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  f.ToolkitInstalled();
  // Configuration management owns the file and links it into place.
  f.root.Write("/etc/cm/daemon.json", "{\"log-driver\": \"journald\"}\n");
  f.root.Symlink("/etc/cm/daemon.json", "/etc/docker/daemon.json");
  auto p = f.Build();
  const auto* dj = Find(p, "docker.daemon-json");
  REQUIRE(dj);
  CHECK(dj->actions[0].path == "/etc/cm/daemon.json");  // apply and the sh script write the link's target
  CHECK(dj->actions[0].link == "/etc/docker/daemon.json");
  CHECK(dj->actions[0].contents.find("\"log-driver\": \"journald\"") !=
        std::string::npos);  // the target's keys kept
  CHECK(plan::RenderText(p).find(
            "write /etc/cm/daemon.json (through the link /etc/docker/daemon.json) (mode 0644)") !=
        std::string::npos);
  const std::string sh = plan::RenderSh(p);
  CHECK(sh.find("gpuprep_write /etc/cm/daemon.json 0644 backup <<") != std::string::npos);
  CHECK(sh.find("> /etc/docker/daemon.json") == std::string::npos);

  f.root.Write("/srv/cm/daemon.json", "{}\n");
  f.root.Symlink("/srv/cm/daemon.json", "/etc/docker/daemon.json");
  try {
    f.Build();
    FAIL("a link out of /etc was planned");
  } catch (const Error& e) {
    CHECK(e.code() == kExitUsage);
    CHECK(std::string(e.what()) ==
          "/etc/docker/daemon.json is a symbolic link to /srv/cm/daemon.json, outside /etc: gpuprep edits a "
          "linked "
          "system file only when the link stays inside /etc (put the file itself at /etc/docker/daemon.json, "
          "or link "
          "it to a file under /etc)");
  }
}

TEST_CASE("containers: daemon.json linked to a file that is not JSON: daemon.json is named, nothing quoted",
          "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  f.ToolkitInstalled();
  f.root.Write("/etc/secretfile", "rXoXoXt:$6$saltsalt$hashhash:19000:0:99999:7:::\n");
  f.root.Symlink("/etc/secretfile", "/etc/docker/daemon.json");
  try {
    f.Build();
    FAIL("a daemon.json that is not JSON was planned");
  } catch (const Error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(e.code() == kExitUsage);
    CHECK(what.rfind(f.root.path() + "/etc/docker/daemon.json:1:1: ", 0) == 0);
    for (const char* leaked : {"rXoXoXt", "$6$", "saltsalt", "hashhash", "19000", "last read", "'r'"})
      CHECK(what.find(leaked) == std::string::npos);
  }
  CHECK(f.root.Read("/etc/secretfile") == "rXoXoXt:$6$saltsalt$hashhash:19000:0:99999:7:::\n");
}

TEST_CASE("containers: runtime mode, the experimental channel, digest and mirror", "[plan][containers]") {
  Fixture f;
  f.DockerRunning();
  f.ToolkitInstalled();
  f.root.Write("/etc/docker/daemon.json",
               R"({"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}})");
  f.root.Write("/etc/nvidia-container-runtime/config.toml",
               "[nvidia-container-cli]\nmode = \"x\"\n\n[nvidia-container-runtime]\nlog-level = "
               "\"info\"\nmode = \"auto\"\n");
  f.root.Write(
      "/etc/apt/sources.list.d/old-toolkit.list",
      "deb [signed-by=/k.gpg] https://nvidia.github.io/libnvidia-container/experimental/deb/amd64 /\n");
  f.root.Write("/etc/apt/sources.list.d/commented.list",
               "# deb https://nvidia.github.io/libnvidia-container/experimental/deb/amd64 /\n");
  CHECK(probe::ParseToolkitRuntimeMode(f.root.Read("/etc/nvidia-container-runtime/config.toml")) == "auto");
  const std::string old_list = "/etc/apt/sources.list.d/old-toolkit.list";
  const std::string commented = "/etc/apt/sources.list.d/commented.list";
  CHECK(probe::ExperimentalToolkitLists({{old_list, f.root.Read(old_list)},
                                         {commented, f.root.Read(commented)},
                                         {"/absent", std::nullopt}}) == std::vector<std::string>{old_list});
  f.stack.docker.toolkit_mode = "legacy";
  f.stack.image.digest = kDigest;
  f.stack.image.mirror = "registry.internal:5000/nvcr";
  auto p = f.Build();
  REQUIRE(Find(p, "container_toolkit.experimental"));
  CHECK(Find(p, "container_toolkit.experimental")->actions[0].to ==
        "/etc/apt/sources.list.d/old-toolkit.list.gpuprep.bak");
  CHECK(sys::ShellJoin(Find(p, "container_toolkit.mode")->actions[0].argv) ==
        "nvidia-ctk config --in-place --set nvidia-container-runtime.mode=legacy");
  const auto& pull = Find(p, "image.pull")->actions[0];
  CHECK(pull.image == "registry.internal:5000/nvcr/nvidia/pytorch@" + kDigest);
  CHECK(pull.digest == kDigest);
  // pulled, but at another digest than the stack pins: pull again
  f.facts.docker.image = {pull.image, true, true, "sha256:" + std::string(64, 'e'), "", "", ""};
  p = f.Build();
  CHECK(Layer(p, "image").kind == plan::LayerDecision::Kind::kInstall);
}

TEST_CASE("containers: without Docker and without a docker section, the toolkit still installs",
          "[plan][containers]") {
  Fixture f;
  f.stack.docker = manifest::DockerSpec{};
  auto p = f.Build();
  CHECK(Layer(p, "docker").kind == plan::LayerDecision::Kind::kNotApplicable);
  CHECK(Layer(p, "container_toolkit").kind == plan::LayerDecision::Kind::kInstall);
  CHECK(Find(p, "docker.daemon-json") == nullptr);
  CHECK(Layer(p, "image").kind == plan::LayerDecision::Kind::kNotApplicable);
}
