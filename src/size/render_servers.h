// The servers that fit, the host around the GPUs and host verdicts, as text for people and as the
// "servers" and "hosts" members of `gpuprep size --json` (docs/json.md). Costs are computed by the caller
// (src/prices/) and handed in per board.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "size/host_check.h"
#include "size/recommend.h"

namespace gp::size {

struct RowCost {
  double per_gpu_hour = 0;
  double per_hour = 0;   // the configuration's GPUs x per_gpu_hour
  double per_month = 0;  // per_hour x the hours of a month
};

struct Costs {
  std::string currency;  // "" when the price came from --price-per-gpu-hour
  double hours_per_month = 0;
  std::map<std::string, RowCost> by_board;   // board name -> cost of its row's configuration
  std::map<std::string, RowCost> by_change;  // alternative change + board -> cost
  bool Any() const { return !by_board.empty() || !by_change.empty(); }
};

// `verbose`: every board's memory and interconnect source under its row.
std::string RenderServersText(const Recommendation& r, const Costs& costs, bool verbose);
nlohmann::ordered_json ServersJson(const Task& t, const Recommendation& r, const Costs& costs);

// The host the best configuration needs (cores, RAM, storage) and what data-center servers ship; `verbose`:
// with the sources of the ratios and of each reference server.
std::string RenderHostNeedText(const Task& t, const Recommendation& r, bool verbose);
nlohmann::ordered_json HostNeedJson(const HostNeed& n);

std::string RenderVerdictsText(const std::vector<HostVerdict>& v);
nlohmann::ordered_json VerdictsJson(const std::vector<HostVerdict>& v);

// The key of Costs::by_change for an alternative.
inline std::string ChangeKey(const Alternative& a) { return a.change + "|" + a.board; }

}  // namespace gp::size
