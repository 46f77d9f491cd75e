// `source: redist` through plan and apply: the planner's step (kRedist + ldconfig + verify), its renderings,
// the executor running it with the real libcurl/libarchive on a local directory (the air-gapped case), and a
// re-plan that finds nothing to do. Commands go to a FakeCommandRunner; the loader is FakeNative.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apply/executor.h"
#include "apply/harness.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/plan_queries.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "redist/loopback.h"
#include "support/fakes.h"
#include "support/plan_host.h"
#include "util/strings.h"

using namespace gp;
using gp::test::Layer;

namespace {

struct RedistHost {
  test::TempRoot root, aux;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  test::FakeCommandRunner runner;
  test::FakeNative native = test::FakeNative::Healthy(2);
  apply::Journal journal;

  RedistHost() {
    test::MakeRedist(aux.path() + "/www", "good");
    stack.cudnn.version = test::Pin("9.12.0.46");
    stack.cudnn.cuda_major = 12;
    stack.cudnn.packages.clear();
    stack.cudnn.source = "redist";
    stack.cudnn.redist.release = "9.12.0";
    stack.cudnn.redist.components = {"cudnn"};
    stack.cudnn.redist.base = aux.path() + "/www";
    native.cudnn = {true, "/opt/gpuprep/cudnn/current/lib/libcudnn.so.9", 91200, ""};
  }
  plan::Plan Plan() {
    plan::PlanInput in;
    in.stack = &stack;
    in.facts = &facts;
    in.only = {"cudnn"};
    return test::PlanHost(in, root.fs());
  }
  apply::ExecResult Run(const plan::Plan& p) {
    apply::ExecEnv env;
    env.verify = layers::VerifyLayer;
    env.fs = &root.fs();
    env.runner = &runner;
    env.native = &native;
    env.stack = &stack;
    env.facts = &facts;
    env.now = [] { return std::string("2026-11-30T12:00:00Z"); };
    env.make_http = [] { return sys::MakeCurlHttpClient(); };
    journal.stack = stack.name;
    return apply::Execute(p, journal, env);
  }
};

}  // namespace

TEST_CASE("redist plan: one step installs the archive, runs ldconfig, then verify", "[redist]") {
  RedistHost h;
  auto p = h.Plan();
  const auto& l = Layer(p, "cudnn");
  CHECK(plan::DecisionName(l.kind) == std::string("install"));
  CHECK(l.wanted == "9.12.0.46");
  CHECK(l.detail == "missing: /opt/gpuprep/cudnn/9.12.0.46-cuda12");
  REQUIRE(p.steps.size() == 2);
  CHECK(p.steps[0].id == "redist.cudnn");
  REQUIRE(p.steps[0].actions.size() == 2);
  const auto& a = p.steps[0].actions[0];
  CHECK(a.kind == plan::Action::Kind::kRedist);
  CHECK(a.redist.json_url == "file://" + h.aux.path() + "/www/redistrib_9.12.0.json");
  CHECK(a.redist.platform == "linux-x86_64");
  CHECK(a.redist.cuda_major == std::optional<int>(12));
  CHECK(p.steps[0].actions[1].argv == std::vector<std::string>{"ldconfig"});
  CHECK(p.steps[1].id == "verify.cudnn");

  const std::string text = plan::RenderText(p);
  CHECK(text.find("install NVIDIA redistributable cudnn 9.12.0.46 (linux-x86_64, cuda12) listed in file://" +
                  h.aux.path() + "/www/redistrib_9.12.0.json into /opt/gpuprep/cudnn/9.12.0.46-cuda12") !=
        std::string::npos);
  auto j = plan::RenderJson(p);
  CHECK(j["steps"][0]["actions"][0]["redist"]["prefix"] == "/opt/gpuprep/cudnn/9.12.0.46-cuda12");
  CHECK(j["steps"][0]["actions"][0]["redist"]["cuda_major"] == 12);
  const std::string sh = plan::RenderSh(p, "gpuprep");
  CHECK(sh.find("\ngpuprep apply --yes --only cudnn\n") != std::string::npos);
}

TEST_CASE("redist apply: installs from a local directory, ldconfig, verifies; the re-plan is empty",
          "[redist]") {
  RedistHost h;
  auto r = h.Run(h.Plan());
  INFO(r.message);
  REQUIRE(r.exit_code == 0);
  CHECK(h.runner.Joined() == std::vector<std::string>{"ldconfig"});
  CHECK(h.root.fs().ReadLink("/opt/gpuprep/cudnn/current") == std::optional<std::string>("9.12.0.46-cuda12"));
  CHECK(h.root.Exists("/opt/gpuprep/cudnn/9.12.0.46-cuda12/include/cudnn_version.h"));
  auto again = h.Plan();
  CHECK(plan::DecisionName(Layer(again, "cudnn").kind) == std::string("none"));
  CHECK(Layer(again, "cudnn").found == "9.12.0.46-cuda12");
  CHECK(again.steps.empty());

  SECTION("verify fails when the loader finds another cuDNN") {
    h.native.cudnn = {true, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", 91200, ""};
    h.root.fs().Remove("/etc/ld.so.conf.d/gpuprep-cudnn.conf");
    auto r2 = h.Run(h.Plan());
    CHECK(r2.exit_code == 1);
    CHECK(r2.message ==
          "verify.cudnn: cuDNN 9.12.0 loads from /usr/lib/x86_64-linux-gnu/libcudnn.so.9, not the stack's "
          "redistributable install in /opt/gpuprep/cudnn (fix: sudo gpuprep apply --yes --only cudnn)");
  }
}

TEST_CASE("redist apply: a hostile archive fails the step and changes nothing", "[redist]") {
  RedistHost h;
  test::MakeRedist(h.aux.path() + "/www", "traversal");
  auto r = h.Run(h.Plan());
  CHECK(r.exit_code == 1);
  CHECK(r.message.rfind("redist.cudnn: file://", 0) == 0);
  CHECK(EndsWith(r.message, "\": \"..\" climbs out of the prefix; nothing was installed"));
  CHECK(h.runner.calls.empty());
  CHECK_FALSE(h.root.Exists("/opt/gpuprep"));  // not even the directories it made on the way
  CHECK_FALSE(h.root.Exists("/etc/ld.so.conf.d/gpuprep-cudnn.conf"));
}

TEST_CASE("redist plan: a machine NVIDIA publishes no archives for is refused", "[redist]") {
  RedistHost h;
  h.facts.arch = "riscv64";
  auto p = h.Plan();
  const auto& l = Layer(p, "cudnn");
  CHECK(plan::DecisionName(l.kind) == std::string("refused"));
  CHECK(l.detail == "NVIDIA publishes no Linux redistributable archives for riscv64");
}
