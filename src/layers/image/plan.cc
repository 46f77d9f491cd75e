// image's plan: the stack's image pulled through the Docker Engine API (at its digest when pinned, through
// the mirror when set), when the docker layer leaves an engine to pull into.
#include "docker/image_ref.h"
#include "layers/docker/docker.h"
#include "layers/image/image.h"
#include "plan/containers.h"

namespace gp::layers {

plan::LayerPlan PlanImage(const plan::LayerContext& ctx) {
  using Kind = plan::LayerDecision::Kind;
  const char* const name = "image";
  const manifest::ImageSpec& img = ctx.stack->image;
  if (img.ref.empty())
    return plan::Decided(name, Kind::kNotApplicable, "stack " + ctx.stack->name + " names no image");
  if (!ctx.Selected(name)) return plan::Decided(name, Kind::kSkipped, "not selected");
  const std::string pull = docker::ImagePullReference(img.ref, img.digest, img.mirror);
  if (pull.empty())
    return plan::Decided(name, Kind::kRefused, "\"" + img.ref + "\" is not an image reference");
  if (!EngineFor(ctx).ready)
    return plan::Decided(name, ctx.stack->docker.present ? Kind::kSkipped : Kind::kNotApplicable,
                         "no Docker engine to pull " + pull + " into (see the docker layer)");
  const probe::ImageInfo& have = ctx.facts->docker.image;
  const bool same_ref = have.ref == pull;
  if (same_ref && have.present && (img.digest.empty() || have.digest == img.digest)) {
    plan::LayerPlan out = plan::Decided(name, Kind::kNone, "pulled");
    out.decision.found = have.digest;
    out.decision.wanted = pull;
    return out;
  }
  plan::LayerPlan out =
      plan::Decided(name, Kind::kInstall,
                    same_ref && have.present ? "pulled at " + have.digest + ", the stack pins " + img.digest
                                             : "not pulled");
  out.decision.wanted = pull;
  out.decision.found = same_ref && have.present ? have.digest : "";
  out.in_transaction = true;
  plan::Action a;
  a.kind = plan::Action::Kind::kPull;
  a.image = pull;
  a.digest = img.digest;
  a.timeout = std::chrono::seconds(3600);
  out.last.push_back(plan::MakeStep("image.pull", {name}, "pull " + pull + " through the Docker Engine API"));
  out.last.back().actions.push_back(a);
  return out;
}

}  // namespace gp::layers
