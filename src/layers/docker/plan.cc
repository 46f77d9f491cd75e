// docker's plan: an engine already there is left as it is (refused when too old for the stack's GPU
// access); otherwise the stack's engine packages (the distribution's docker.io by name, or pinned ones
// through the transaction), then the engine enabled and started.
#include <algorithm>

#include "layers/docker/docker.h"
#include "plan/containers.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

using plan::LayerPlan;
using Kind = plan::LayerDecision::Kind;
constexpr const char* kName = "docker";

LayerPlan Decide(const plan::LayerContext& ctx) {
  const manifest::DockerSpec& spec = ctx.stack->docker;
  const probe::DockerInfo& d = ctx.facts->docker;
  if (!ctx.Selected(kName)) return plan::Decided(kName, Kind::kSkipped, "not selected");
  const std::string pkg_version = plan::InstalledEngine(*ctx.packages.state);
  if (EnginePresent(ctx)) {
    const std::string text = d.engine_reachable && !d.version.empty() ? d.version : pkg_version;
    LayerPlan out = plan::Decided(kName, Kind::kNone, "");
    plan::LayerDecision& l = out.decision;
    l.found = text.empty() ? "installed" : text;
    l.wanted = verdict::DockerGpuFloor(spec.gpu_access).wanted;
    if (auto below = verdict::DockerBelowFloor(text, spec.gpu_access)) {
      l.kind = Kind::kRefused;
      l.detail = *below + "; gpuprep leaves an existing engine alone: upgrade it, then run apply again";
      return out;
    }
    l.detail = "Docker " + (text.empty() ? std::string("is installed") : text + " is installed") +
               (d.engine_reachable ? " and answers" : "") + "; an existing engine is left as it is";
    // Installed but not answering on this live host (stopped, or refusing its configuration at start): the
    // later layers need it, so it is started first; a start that fails stops the run there, with
    // systemd's answer.
    if (ctx.facts->live && !d.engine_reachable && spec.present) {
      l.kind = Kind::kInstall;
      l.detail = "Docker " + (text.empty() ? std::string("is installed") : text + " is installed") +
                 " but does not answer (" + d.detail + "): start " + plan::kDockerUnit;
      out.last.push_back(plan::MakeStep("docker.start", {kName}, "start the Docker engine"));
      out.last.back().actions.push_back(plan::Action::Run({"systemctl", "start", plan::kDockerUnit}));
    }
    return out;
  }
  if (!spec.present)
    return plan::Decided(
        kName, Kind::kNotApplicable,
        "Docker is not installed and stack " + ctx.stack->name +
            " does not set it up (add a docker: section with engine: docker.io or docker-ce)");
  LayerPlan out;
  out.packages = plan::DecideContainerPackages(ctx.packages, kName, spec.packages, "", out.by_name);
  if (!out.packages.error.empty()) {
    out.decision = plan::Decided(kName, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  const std::string& detail = out.packages.detail;
  out.decision =
      plan::Decided(kName, Kind::kInstall,
                    (detail.empty() ? "" : detail + "; ") + "then enable and start " + plan::kDockerUnit)
          .decision;
  out.decision.wanted = spec.engine;
  out.in_transaction = true;
  out.last.push_back(plan::MakeStep("docker.enable", {kName}, "enable and start the Docker engine"));
  out.last.back().actions.push_back(plan::Action::Run({"systemctl", "enable", "--now", plan::kDockerUnit}));
  return out;
}

// The pins gpuprep gave the docker layer's packages when it installed them stay that layer's, even when the
// engine is now left as it is: installed at the pin and pinned by gpuprep at that version, each is a root
// of the run, so the pin and the hold are kept.
void KeepEnginePins(const plan::LayerContext& ctx, LayerPlan& out) {
  const manifest::Stack& stack = *ctx.stack;
  const plan::PackageState& state = *ctx.packages.state;
  if (!stack.docker.present) return;
  auto& roots = out.packages.roots;
  for (const auto& p : stack.docker.packages) {
    if (p.NoVersion()) continue;  // the distribution's engine by name: never pinned
    const std::string* have = state.Installed(p.name);
    auto old = state.pins.find(p.name);
    if (!have || old == state.pins.end() || old->second.version != *have ||
        !apt::MatchesPin(*have, plan::Rule(p, "", false, ctx.packages.cuda)))
      continue;
    if (std::none_of(roots.begin(), roots.end(),
                     [&p](const plan::PackageRoot& r) { return r.name == p.name; }))
      roots.push_back({kName, p.name, *have});
  }
}

}  // namespace

bool EnginePresent(const plan::LayerContext& ctx) {
  // An engine: one that answers, or an engine package. A docker CLI alone (docker-ce-cli, a static binary)
  // has nothing to run containers with.
  return ctx.facts->docker.engine_reachable || !plan::InstalledEngine(*ctx.packages.state).empty();
}

EngineReady EngineFor(const plan::LayerContext& ctx) {
  const plan::LayerDecision* d = ctx.Earlier(kName);
  if (!d) return {false, false};
  switch (d->kind) {
    case Kind::kNone:
      return {true, false};
    case Kind::kInstall:
      return {true, true};
    case Kind::kSkipped:  // not selected: whatever engine is there
      return {EnginePresent(ctx), false};
    default:
      return {false, false};
  }
}

LayerPlan PlanDocker(const plan::LayerContext& ctx) {
  LayerPlan out = Decide(ctx);
  if (ctx.Selected(kName)) KeepEnginePins(ctx, out);
  return out;
}

}  // namespace gp::layers
