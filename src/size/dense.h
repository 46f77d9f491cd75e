// A recommender's dense part as TorchRec's DLRM builds it (docs/size.md "The dense part"): the DenseArch
// (a bottom MLP over the dense features), the interaction of its output with the pooled embeddings (pairwise
// dot products, or DLRM_DCN's low-rank cross net) and the OverArch (a top MLP down to the click logit). Its
// parameters and the tensors autograd keeps are counted layer by layer. Private to src/size/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "size/activations.h"
#include "size/settings.h"

namespace gp::size {

struct DensePart {
  std::string name;     // "dense arch", "interaction", "over arch"
  uint64_t params = 0;  // weights and biases
  double saved = 0;     // values autograd keeps per sample
  int out = 0;          // width of its output
  std::string formula;  // how both were counted, with the task's numbers
};

struct DenseCounts {
  std::vector<DensePart> parts;
  uint64_t params = 0;
  double saved = 0;  // values per sample, all parts
};

// Zero parts when the task has no dense layers.
DenseCounts CountDense(const Task& t);

// The saved tensors of t.micro_batch samples, in the activation precision.
ActivationEstimate DenseActivations(const Task& t);

// The recommender.* keys (settings.h): --dense-features, --dense-layers, --over-layers, --interaction,
// --dcn-layers, --dcn-rank.
void ApplyDense(Task& t, const Setting& s);

// Once every setting is in (after the tables are paired): the checks that need the tables, and the model
// the layers describe (its name, and its parameter count for the model states).
void FinishDense(Task& t);

extern const char* const kDenseSource;

}  // namespace gp::size
