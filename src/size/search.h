// The search behind recommend.h, private to src/size/: the layouts tried for a GPU count, the first that
// fits, the smallest configuration of one board, and the task changes tried when nothing fits.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "size/recommend.h"

namespace gp::size {

// The first layout (least communication first) whose per-GPU need fits `memory` bytes on exactly `gpus`
// GPUs in servers of `per_server`, tensor parallelism at most `domain`; without the link description.
// `closest`, when given, keeps the layout that came closest among those that did not fit.
std::optional<Option> FirstFit(const Task& t, uint64_t memory, int gpus, int per_server, int domain,
                               std::optional<Option>* closest);

struct Found {
  std::optional<Option> best;     // the smallest configuration that fits
  std::optional<Option> closest;  // else the layout that came closest at the largest count tried
};

// Each of the board's server sizes, then servers of its largest size in multiples of 8 GPUs, 2 to
// `max_servers` servers.
Found Search(const Task& t, const Board& b, int max_servers);

// The changes that would make the task fit (alternatives.cc): on one board (at most three, cheapest
// first), and over all boards (each change with its smallest configuration on any board).
std::vector<Alternative> BoardAlternatives(const Task& t, const Board& b, const SearchLimits& limits);
std::vector<Alternative> TaskAlternatives(const Task& t, const std::vector<Board>& boards,
                                          const SearchLimits& limits);

// Whether `a` is the smaller configuration: fewer GPUs, then fewer servers, then less memory per GPU.
bool Smaller(const Option& a, const Option& b);

}  // namespace gp::size
