// The estimate as a table for people and as the JSON document of docs/json.md ("gpuprep size --json").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "size/estimate.h"

namespace gp::size {

struct FitAnswer {
  uint64_t gpu_memory = 0;  // 0: not asked
  std::optional<Fit> fit;   // nullopt when asked and no count fits
};

// `verbose`: every term's formula and source under it. `color`: bold totals (a terminal, NO_COLOR unset).
std::string RenderText(const Task& t, const Estimate& e, const FitAnswer& fit, bool verbose, bool color);

nlohmann::ordered_json RenderJson(const Task& t, const Estimate& e, const FitAnswer& fit);

// The shipped model table: name, family, layers, hidden, heads, KV heads, FFN, vocabulary, tied, parameters.
std::string RenderModelTable();
nlohmann::ordered_json ModelTableJson();

}  // namespace gp::size
