#include "plan/compose.h"

#include <algorithm>
#include <set>

#include "apt/commands.h"
#include "manifest/digest.h"
#include "plan/layer_plan.h"
#include "plan/repositories.h"
#include "plan/transaction.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::plan {

namespace {

using Kind = LayerDecision::Kind;

// The layers' own packages, in layer order: the roots and install words of the one transaction.
struct Packages {
  std::vector<PackageRoot> roots;
  std::vector<std::string> install;
  bool allow_held = false, needs_index = false;
  void Add(const PackageDecision& d) {
    roots.insert(roots.end(), d.roots.begin(), d.roots.end());
    install.insert(install.end(), d.install.begin(), d.install.end());
    allow_held = allow_held || d.allow_held;
    needs_index = needs_index || d.needs_index;
  }
};

// A system file gpuprep edits (daemon.json, the nouveau blacklist) that is a symbolic link is written
// through it, as apply's WriteAtomic does (sys/fs.h ResolveWriteTarget; the host state holds each one
// resolved), so `plan --format sh` writes the same file; a link leading out of /etc is bad input: exit 2,
// before anything changes.
void WriteThroughLinks(const HostState& host, Plan& plan) {
  for (auto& step : plan.steps)
    for (auto& a : step.actions) {
      if (a.kind != Action::Kind::kWrite || !a.keep_backup) continue;
      auto it = host.write_targets.find(a.path);
      if (it == host.write_targets.end())  // every such file is one of kBackedUpFiles
        throw Error(kExitFailed, "internal error: " + a.path + " is written with a backup but was not read");
      const sys::WriteTarget& t = it->second;
      if (!t.error.empty()) throw UsageError(t.error);
      a.link = t.link;
      a.path = t.path;
    }
}

void Append(std::vector<Step>& to, const std::vector<Step>& steps) {
  to.insert(to.end(), steps.begin(), steps.end());
}

// A new step at the end of the plan.
Step& ComposeStep(Plan& plan, std::string id, std::vector<std::string> for_layers, std::string title) {
  plan.steps.push_back(MakeStep(std::move(id), std::move(for_layers), std::move(title)));
  return plan.steps.back();
}

// Before an install: the stack's repositories set up, then the package lists refreshed.
void RepositorySteps(const LayerContext& ctx, Plan& plan) {
  RepositorySetup repos =
      PlanRepositories(*ctx.host, AptRepositoriesFor(*ctx.stack, *ctx.facts), ctx.stack->name);
  Append(plan.steps, repos.steps);
  plan.blockers.insert(plan.blockers.end(), repos.blockers.begin(), repos.blockers.end());
  // Always before an install: the versions were resolved from the repositories' current index, and the
  // host's lists must hold them too.
  ComposeStep(plan, "apt.update", {}, "refresh the package lists")
      .actions.push_back(Action::Run(apt::UpdateArgv(ctx.in->apt), apt::AptEnv()));
}

// apt's preferences written when the transaction's differ from the host's, or (versions resolved at apply
// time) a pin step that says so.
void AptPinStep(const LayerContext& ctx, const Transaction& tx, Plan& plan) {
  const std::string& prefs = ctx.packages.state->preferences;
  if (!tx.preferences.empty() && tx.preferences != prefs) {
    // gpuprep's own file: no backup beside it (apt would read, or warn about, every file in preferences.d).
    const bool ours = prefs.empty() || StartsWith(prefs, "# gpuprep:");
    ComposeStep(plan, "apt.pin", {},
                "pin every package of the stack at its exact version (" + std::string(apt::kPreferencesPath) +
                    ", priority " + std::to_string(apt::kPinPriority) + ")")
        .actions.push_back(Action::Write(apt::kPreferencesPath, tx.preferences, 0644, !ours));
  } else if (plan.needs_index && !tx.install.empty()) {
    ComposeStep(
        plan, "apt.pin", {},
        "pin every package of the stack at the exact version resolved from the repositories' index at "
        "apply "
        "time (" +
            std::string(apt::kPreferencesPath) + ")");
  }
}

// The one apt transaction, for `apt_layers` (held packages may change with `allow_held`).
void AptInstallStep(const PlanInput& in, const Transaction& tx, bool allow_held,
                    const std::vector<std::string>& apt_layers, Plan& plan) {
  apt::AptOptions o = in.apt;
  o.allow_change_held = allow_held;
  Action a = Action::Run(apt::InstallArgv(tx.install, o), apt::AptEnv());
  a.apt_progress = true;
  a.timeout = std::chrono::seconds(3600);
  ComposeStep(plan, "apt.install", apt_layers,
              "one apt transaction for every missing package, pinned exactly")
      .actions.push_back(a);
}

// A verify per layer that changes (or that the resume asks for).
void VerifySteps(const PlanInput& in, Plan& plan) {
  for (const auto& l : plan.layers) {
    const bool changed = l.kind == Kind::kInstall || l.kind == Kind::kReboot;
    const bool asked = Contains(in.verify_layers, l.name) && l.kind == Kind::kNone;
    if (changed || asked)
      ComposeStep(plan, "verify." + l.name, {l.name}, "verify " + l.name)
          .actions.push_back(Action::Verify(l.name));
  }
}

// The plan's steps in execution order: dpkg repaired, each layer's first steps, the repositories, the one
// apt transaction (update, unhold, pin, install), each layer's steps after the install, the holds, each
// layer's steps after the holds, each layer's last steps, then a verify per layer that changes (or that the
// resume asks for).
void Steps(const LayerContext& ctx, const std::vector<LayerPlan>& layers, const Transaction& tx,
           bool allow_held, Plan& plan) {
  std::vector<std::string> apt_layers;
  for (const auto& l : layers)
    if (l.in_transaction) apt_layers.push_back(l.decision.name);
  const bool any_apt = !tx.install.empty() || !tx.hold.empty();
  if (any_apt && (ctx.host->dpkg_journal || !ctx.facts->dpkg_interrupted.empty()))
    ComposeStep(plan, "dpkg.repair", {}, "dpkg was interrupted: finish configuring half-installed packages")
        .actions.push_back(Action::Run(apt::DpkgRepairArgv(), apt::AptEnv()));
  for (const auto& l : layers) Append(plan.steps, l.first);
  if (!tx.install.empty()) RepositorySteps(ctx, plan);
  if (!tx.unhold.empty())
    ComposeStep(plan, "apt.unhold", {},
                "release gpuprep's holds on packages the stack no longer pins at these versions")
        .actions.push_back(Action::Run(apt::UnholdArgv(tx.unhold)));
  AptPinStep(ctx, tx, plan);
  if (!tx.install.empty()) AptInstallStep(*ctx.in, tx, allow_held, apt_layers, plan);
  for (const auto& l : layers) Append(plan.steps, l.after_install);
  if (!tx.hold.empty())
    ComposeStep(plan, "apt.hold", apt_layers, "hold every pinned package so upgrades cannot move them")
        .actions.push_back(Action::Run(apt::HoldArgv(tx.hold)));
  else if (plan.needs_index && !tx.install.empty())
    ComposeStep(plan, "apt.hold", apt_layers, "hold every package of the stack (resolved at apply time)");
  for (const auto& l : layers) Append(plan.steps, l.after_hold);
  for (const auto& l : layers) Append(plan.steps, l.last);
  VerifySteps(*ctx.in, plan);
}

// The context every layer's plan reads: the package state (read before planning) and the repositories'
// index (given by apply's preflight, or the host's apt lists, which `plan` names as where versions come
// from).
LayerContext ComposeContext(const PlanInput& in, Plan& plan) {
  if (!in.host) throw Error(kExitFailed, "internal error: a plan was asked for without the host state");
  const HostState& host = *in.host;
  LayerContext ctx;
  ctx.in = &in;
  ctx.stack = in.stack;
  ctx.facts = in.facts;
  ctx.host = &host;
  ctx.arch = apt::DpkgArch(in.facts->arch);
  ctx.packages.state = &host.packages;
  ctx.packages.cuda = in.stack->cuda.version.known() ? in.stack->cuda.version.version->Prefix(2).str() : "";
  if (in.index) {
    ctx.packages.index = in.index;
    plan.resolved_from = "the repositories' index fetched by apply";
  } else {
    if (host.lists.complete) {
      ctx.packages.index = &host.lists.index;
      plan.resolved_from = "the host's apt lists";
    }
  }
  return ctx;
}

// The layers' decisions, blockers, kernel packages and reboot into the plan, and their packages into one
// set, the distribution's packages by name (docker.io) after every pinned one. A refused layer changes
// nothing: its packages stay off the install line and its steps (a reboot check included) out of the plan,
// so the plan shows only what apply would do once the refusal is resolved or the layer skipped. Its refusal
// stands in the blockers.
Packages TakeLayerPlans(std::vector<LayerPlan>& layers, Plan& plan) {
  Packages pkgs;
  for (auto& l : layers) {
    plan.layers.push_back(l.decision);
    plan.blockers.insert(plan.blockers.end(), l.blockers.begin(), l.blockers.end());
    if (l.decision.kind == Kind::kRefused) {
      LayerPlan refused;
      refused.decision = l.decision;
      refused.blocked = l.blocked;
      l = std::move(refused);
      continue;
    }
    pkgs.Add(l.packages);
    plan.kernel_packages.insert(plan.kernel_packages.end(), l.kernel_packages.begin(),
                                l.kernel_packages.end());
    plan.reboot = plan.reboot || l.reboot;
  }
  for (const auto& l : layers) pkgs.install.insert(pkgs.install.end(), l.by_name.begin(), l.by_name.end());
  return pkgs;
}

}  // namespace

Plan ComposePlan(const PlanInput& in, const std::vector<std::string>& apply_layers,
                 const LayerPlanner& plan_layers) {
  const manifest::Stack& stack = *in.stack;
  Plan plan;
  plan.stack = stack.name;
  plan.manifest = in.manifest;
  const LayerContext ctx = ComposeContext(in, plan);
  std::vector<LayerPlan> layers = plan_layers(ctx);
  const Packages pkgs = TakeLayerPlans(layers, plan);
  plan.needs_index = pkgs.needs_index;
  TransactionInput tin{ctx.packages.state, ctx.packages.index, pkgs.roots, pkgs.install, {}, stack.name};
  for (const auto& l : apply_layers)
    if (!ctx.Selected(l)) tin.left_alone.insert(l);
  const Transaction tx = DecideTransaction(tin);
  plan.needs_index = plan.needs_index || tx.needs_index;
  plan.blockers.insert(plan.blockers.end(), tx.blockers.begin(), tx.blockers.end());
  plan.pins = tx.pins;
  // All or nothing: a selected layer that cannot be installed stops apply before its first change.
  for (const LayerPlan& l : layers)
    if (l.decision.kind == Kind::kRefused && !l.blocked)
      plan.blockers.push_back(l.decision.name + ": " + l.decision.detail +
                              " (to leave the layer out: --skip " + l.decision.name + ")");
  for (const auto& l : plan.layers)
    if (l.kind == Kind::kSkipped && !ctx.Selected(l.name)) plan.left_alone.push_back(l.name);
  Steps(ctx, layers, tx, pkgs.allow_held || tx.allow_held, plan);
  if (in.from && in.from->name != stack.name) {  // a move from the host's recorded stack: what it changes
    plan.move_from = in.from->name;
    for (const auto& c : manifest::PinChanges(*in.from, stack))
      plan.move_changes.push_back({c.field, c.from, c.to});
  }
  WriteThroughLinks(*in.host, plan);
  return plan;
}

std::vector<const manifest::AptRepository*> AptRepositoriesFor(const manifest::Stack& stack,
                                                               const probe::HostFacts& facts) {
  std::vector<const manifest::AptRepository*> out;
  // The container toolkit's repository serves only the toolkit (its layer's plan): it is one of these
  // when the stack installs the toolkit.
  const bool toolkit = stack.container_toolkit.enabled && !stack.container_toolkit.packages.empty();
  for (const auto* r : stack.RepositoriesFor(facts.os.id, facts.os.version_id))
    if (toolkit || (r->name.find("container-toolkit") == std::string::npos &&
                    r->url.find("libnvidia-container") == std::string::npos))
      out.push_back(r);
  return out;
}

apt::ListsAnswer KernelPackageAnswer(const PlanInput& in, const std::string& package) {
  if (in.kernel_packages) {
    auto it = in.kernel_packages->find(package);
    if (it != in.kernel_packages->end()) return it->second;
    return {apt::Availability::kUnknown, "the index of this host's apt sources"};
  }
  auto it = in.host->kernel_packages.find(package);
  if (it != in.host->kernel_packages.end()) return it->second;
  return {apt::Availability::kUnknown, "the host's apt lists"};
}

}  // namespace gp::plan
