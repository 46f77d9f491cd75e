// Recommend and BestAt (recommend.h): every board searched (search.cc), sorted, described, and when nothing
// fits, the changes that would (alternatives.cc).
#include "size/recommend.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "size/format.h"
#include "size/search.h"
#include "util/error.h"

namespace gp::size {
namespace {

std::string Need(const Option& o) {
  std::string s = Gb(o.at.per_gpu) + " per GPU on " + std::to_string(o.gpus) + " GPUs (" + Name(o.strategy) +
                  (o.tp > 1 ? ", tp " + std::to_string(o.tp) : "") + ")";
  if (const Term* a = o.at.Find("activations"); a && a->estimated && a->bytes > 0.3 * o.at.per_gpu)
    s += ", of which activations " + Gb(a->bytes) + ": they do not shrink with data parallelism";
  return s;
}

}  // namespace

std::optional<Option> BestAt(const Task& t, const Board& board, int gpus, int per_server, int domain,
                             std::optional<Option>* closest) {
  auto o = FirstFit(t, board.MemoryBytes(), gpus, per_server, domain, closest);
  if (o) DescribeLink(t, board, domain, *o);
  if (closest && *closest) DescribeLink(t, board, domain, **closest);
  return o;
}

Recommendation Recommend(const Task& t, const std::vector<Board>& boards, const SearchLimits& limits) {
  Recommendation r;
  r.limits = limits;
  const Estimate one = EstimateTask(t);
  if (one.lower_bound) {
    for (const Term& term : one.terms)
      if (!term.estimated) {
        r.not_recommended = term.label + " " + term.formula;
        break;
      }
    return r;
  }
  // Boards alike in memory and build give the same answer: searched once.
  std::map<std::tuple<uint64_t, std::vector<int>, int, bool>, Found> memo;
  for (const Board& b : boards) {
    if (b.memory_mib == 0) {
      r.unknown.push_back(b.name);
      continue;
    }
    const auto key = std::make_tuple(b.memory_mib, b.server_sizes, b.nvlink, b.MultiServer());
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, Search(t, b, limits.max_servers)).first;
    BoardRow row;
    row.board = b;
    row.best = it->second.best;
    const int domain = [&] {
      const int s = row.best ? row.best->per_server : b.LargestServer();
      return b.DomainIn(s);
    }();
    if (row.best) {
      DescribeLink(t, b, domain, *row.best);
    } else {
      const auto& c = it->second.closest;
      row.why_not = c ? "the closest layout needs " + Need(*c) + ", more than its " + Gb(c->memory)
                      : "no layout of this model can run on it";
      row.alternatives = BoardAlternatives(t, b, limits);
    }
    r.rows.push_back(std::move(row));
  }
  std::stable_sort(r.rows.begin(), r.rows.end(), [](const BoardRow& a, const BoardRow& b) {
    if (a.best.has_value() != b.best.has_value()) return a.best.has_value();
    if (a.best && Smaller(*a.best, *b.best)) return true;
    if (a.best && Smaller(*b.best, *a.best)) return false;
    if (a.board.datacenter != b.board.datacenter) return a.board.datacenter;
    return a.board.name < b.board.name;
  });
  const bool one_server = std::any_of(r.rows.begin(), r.rows.end(),
                                      [](const BoardRow& row) { return row.best && row.best->servers == 1; });
  if (!one_server) r.alternatives = TaskAlternatives(t, boards, limits);
  return r;
}

}  // namespace gp::size
