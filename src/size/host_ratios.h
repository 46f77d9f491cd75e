// The sourced host ratios: CPU cores and RAM a server needs around its GPUs, per workload kind. Shared by
// `gpuprep size` (host.h) and doctor's host layer (src/layers/host/check.cc), so both say the same numbers
// with the same sources. Standard library only.
#pragma once
#include <optional>
#include <string>

namespace gp::size {

enum class WorkloadKind { kLlm, kVision, kRecommender, kMultimodal };

struct WorkloadRatio {
  WorkloadKind kind;
  const char* name;        // llm, vision, recommender, multimodal
  int dataloader_workers;  // DataLoader worker processes per GPU, one CPU core each
  const char* why;         // the source's words, or why the figure is an inference
};

const WorkloadRatio& RatioFor(WorkloadKind k);
// "llm", "vision", "recommender", "multimodal" -> the kind; nullopt otherwise.
std::optional<WorkloadKind> WorkloadNamed(const std::string& name);
// A stack's workload profile: llm-finetune (and llm) -> kLlm, vision, recommender, multimodal; nullopt for
// general and anything else (the caller then uses the floor, kLlm).
std::optional<WorkloadKind> WorkloadOfProfile(const std::string& profile);

// CPU cores a server of `gpus` GPUs needs: one per GPU process, one per DataLoader worker, 4 for the
// operating system: gpus x (workers + 1) + 4 (28 for 8 GPUs of an LLM, 44 of a vision model).
int CpuCoresFor(WorkloadKind k, int gpus);
std::string CpuFormula(WorkloadKind k, int gpus);  // "8 x (2 + 1) + 4"

// The RAM floor: at least as much CPU memory on a server as its GPUs have.
constexpr const char* kCpuSource =
    "https://github.com/stas00/ml-engineering/blob/744d01e1/compute/cpu/README.md (\"1 cpu core per process "
    "that is tied to the accelerator\", "
    "\"1 cpu core for each DataLoader worker\", \"add a few cores for the Operation system (let's say 4)\": "
    "8*(num_workers+1)+4)";
constexpr const char* kRamSource =
    "https://github.com/stas00/ml-engineering/blob/744d01e1/compute/cpu-memory/README.md (\"typically there "
    "should be at least as much CPU memory "
    "on each node as there is on the GPUs\")";

}  // namespace gp::size
