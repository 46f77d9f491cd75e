// The ratio table (host_ratios.h). Worker counts from Stas Bekman, Machine Learning Engineering,
// https://github.com/stas00/ml-engineering/blob/744d01e1/compute/cpu/README.md.
#include "size/host_ratios.h"

namespace gp::size {
namespace {

const WorkloadRatio kRatios[] = {
    {WorkloadKind::kLlm, "llm", 2,
     "\"2 workers is usually plenty for LMs, especially if the data is already preprocessed\""},
    {WorkloadKind::kVision, "vision", 4,
     "\"If you do CV training, and, say, you need 4 workers per accelerator\" (dynamic transforms need 3-4 "
     "or more)"},
    {WorkloadKind::kRecommender, "recommender", 2,
     "no source gives a recommender figure; its data is preprocessed tables, so the LM figure (2) is used "
     "(approximate)"},
    {WorkloadKind::kMultimodal, "multimodal", 4,
     "\"dynamic transforms, which is often the case with computer vision models or VLMs, you may need 3-4 "
     "and "
     "sometimes more workers\": the CV figure (4)"},
};

}  // namespace

const WorkloadRatio& RatioFor(WorkloadKind k) {
  for (const auto& r : kRatios)
    if (r.kind == k) return r;
  return kRatios[0];
}

std::optional<WorkloadKind> WorkloadNamed(const std::string& name) {
  for (const auto& r : kRatios)
    if (name == r.name) return r.kind;
  return std::nullopt;
}

std::optional<WorkloadKind> WorkloadOfProfile(const std::string& profile) {
  if (profile == "llm-finetune") return WorkloadKind::kLlm;
  return WorkloadNamed(profile);
}

int CpuCoresFor(WorkloadKind k, int gpus) { return gpus * (RatioFor(k).dataloader_workers + 1) + 4; }

std::string CpuFormula(WorkloadKind k, int gpus) {
  return std::to_string(gpus) + " x (" + std::to_string(RatioFor(k).dataloader_workers) + " + 1) + 4";
}

}  // namespace gp::size
