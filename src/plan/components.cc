// cuda, cudnn and nccl's plans: the stack's apt packages at their pins (cuDNN and NCCL name the CUDA build
// in their revision), or with `source: redist` NVIDIA's archives into /opt/gpuprep/<layer>/
// (redist/install.h), then ldconfig. Also the values every layer's plan shares (plan/layer_plan.h).
#include <algorithm>

#include "plan/layer_plan.h"
#include "redist/error.h"
#include "redist/state.h"
#include "util/strings.h"

namespace gp::plan {
namespace {

using Kind = LayerDecision::Kind;

LayerPlan PlanRedist(const LayerContext& ctx, const std::string& name, const manifest::ComponentSpec& c) {
  if (!c.version.known())
    return Decided(name, Kind::kRefused, UnknownPin(ctx.stack->name, name, c.version, c.packages));
  redist::Request req;
  try {
    req = redist::MakeRequest(name, c, ctx.facts->arch);
  } catch (const redist::RedistError& e) {
    return Decided(name, Kind::kRefused, e.what());
  }
  auto found = ctx.host->redist.find(req.layer);
  const redist::State st = found == ctx.host->redist.end() ? redist::State{} : found->second;
  LayerPlan out = Decided(name, st.installed ? Kind::kNone : Kind::kInstall, st.detail);
  out.decision.found = st.found;
  out.decision.wanted = req.version;
  out.in_transaction = !st.installed;  // an install, though apt does not make it
  if (!st.installed) {
    Action a;
    a.kind = Action::Kind::kRedist;
    a.redist = req;
    out.after_hold.push_back(MakeStep("redist." + req.layer, {req.layer},
                                      req.layer + ": NVIDIA's redistributable archives into " + req.prefix));
    out.after_hold.back().actions.push_back(a);
    out.after_hold.back().actions.push_back(Action::Run({"ldconfig"}));
    out.redist.push_back(req);
  }
  return out;
}

}  // namespace

bool LayerContext::Selected(const std::string& layer) const {
  return (in->only.empty() || Contains(in->only, layer)) && !Contains(in->skip, layer);
}

const LayerDecision* LayerContext::Earlier(const std::string& layer) const {
  if (!earlier) return nullptr;
  for (const LayerPlan& p : *earlier)
    if (p.decision.name == layer) return &p.decision;
  return nullptr;
}

LayerPlan Decided(const std::string& layer, LayerDecision::Kind kind, std::string detail) {
  LayerPlan out;
  out.decision.name = layer;
  out.decision.kind = kind;
  out.decision.detail = std::move(detail);
  return out;
}

std::string UnknownPin(const std::string& stack, const std::string& layer, const manifest::Pinned& pin,
                       const std::vector<manifest::AptPackage>& pkgs) {
  if (pin.unknown)
    return "the stack's version is unknown (" +
           (pin.reason.empty() ? std::string("no verified source") : pin.reason) +
           "); pin one in a site manifest (extends: " + stack + ") or run with --skip " + layer;
  if (pkgs.empty()) return "the stack names no packages for this layer; add them or run with --skip " + layer;
  return "";
}

std::string Wanted(const manifest::Pinned& pin, const std::vector<manifest::AptPackage>& pkgs) {
  if (pin.version) return pin.version->str();
  return pkgs.empty() ? "" : pkgs.front().version.empty() ? pkgs.front().upstream : pkgs.front().version;
}

Step MakeStep(std::string id, std::vector<std::string> layers, std::string title) {
  return Step{std::move(id), std::move(layers), std::move(title), {}};
}

LayerPlan PlanComponent(const LayerContext& ctx, const std::string& layer, const manifest::ComponentSpec& c) {
  if (!c.enabled) return Decided(layer, Kind::kNotApplicable, "not part of stack " + ctx.stack->name);
  if (!ctx.Selected(layer)) return Decided(layer, Kind::kSkipped, "not selected");
  if (c.source == "redist") return PlanRedist(ctx, layer, c);
  if (auto why = UnknownPin(ctx.stack->name, layer, c.version, c.packages); !why.empty())
    return Decided(layer, Kind::kRefused, why);
  LayerPlan out;
  out.packages = DecidePackages(ctx.packages, layer, c.packages, c.version.version->str(),
                                layer == "cudnn" || layer == "nccl");
  if (!out.packages.error.empty()) {
    out.decision = Decided(layer, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  const std::string& detail = out.packages.detail;
  out.decision = Decided(layer, detail.empty() ? Kind::kNone : Kind::kInstall,
                         detail.empty() ? "installed and held" : detail)
                     .decision;
  LayerDecision& l = out.decision;
  l.found = FoundVersion(*ctx.packages.state, c.packages);
  // Installs apt did not make (pip wheels, tarballs, runfiles) do not satisfy the pins, but the plan says
  // what is there, as doctor does.
  const probe::Component* probed = layer == "cuda"    ? &ctx.facts->cuda
                                   : layer == "cudnn" ? &ctx.facts->cudnn
                                                      : &ctx.facts->nccl;
  if (l.found.empty() && probed->found)
    l.found = probed->version + " via " + (probed->source.empty() ? "another installer" : probed->source) +
              ", not apt";
  l.wanted = Wanted(c.version, c.packages);
  out.in_transaction = l.kind == Kind::kInstall;
  return out;
}

}  // namespace gp::plan
