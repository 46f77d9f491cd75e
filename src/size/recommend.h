// Which servers fit a task (`gpuprep size`, docs/size.md "Servers that fit"): for every board, the smallest
// configuration whose per-GPU need fits the memory nvidia-smi reports, with the parallel layout it needs, the
// communication that layout moves, and, where nothing fits, what would. Plain values; the estimate
// (estimate.h) is the only arithmetic of memory.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "size/boards.h"
#include "size/estimate.h"

namespace gp::size {

// What one layout moves between GPUs per optimizer step, per GPU (ring collectives: each GPU sends about
// the whole buffer once per collective).
struct Traffic {
  double bytes = 0;          // per GPU per optimizer step
  double network_bytes = 0;  // of which crosses servers over the network (0 inside one NVLink domain)
  std::string formula;       // with the task's numbers
};

struct Option {
  int gpus = 0, servers = 1, per_server = 0;
  Strategy strategy = Strategy::kDdp;
  int tp = 1;
  Estimate at;        // the per-GPU estimate of this layout
  double memory = 0;  // the board's usable bytes per GPU
  Traffic traffic;
  std::string link;  // what carries it: "NVSwitch", "NVLink (NVL72)", "PCIe", "PCIe, no peer-to-peer",
                     // "network" (with the in-server link), "-" on one GPU
  std::vector<std::string> flags;  // interconnect findings, one sentence each
  double Spare() const { return memory - at.per_gpu; }
};

// A change to the task that would make it fit, with the configuration it then gets.
struct Alternative {
  std::string change;  // "--method lora"
  std::string board;
  Option option;
};

struct BoardRow {
  Board board;
  std::optional<Option> best;             // nullopt: nothing up to the search limit fits
  std::string why_not;                    // when nothing fits: the need at the largest configuration tried
  std::vector<Alternative> alternatives;  // when nothing fits: changes that fit this board
};

struct SearchLimits {
  int max_servers = 64;  // multi-server configurations up to this many servers
};

struct Recommendation {
  std::vector<BoardRow> rows;        // fitting rows first (fewest GPUs, then least memory), then the rest
  std::vector<std::string> unknown;  // boards of the catalogue without a sourced memory size
  // When no board fits in one server: changes to the task and the smallest configuration each then gets.
  std::vector<Alternative> alternatives;
  SearchLimits limits;
  // Set when a term of the estimate is not estimated: a lower bound recommends no server (rows and
  // alternatives stay empty); why, in a sentence.
  std::string not_recommended;
};

// Boards without memory_mib go to `unknown`. A task whose estimate is a lower bound gets no rows: a lower
// bound that fits a board says nothing about whether the task does. Throws nothing for layouts the task
// cannot take (they are skipped); the task itself was checked by Finish (settings.h).
Recommendation Recommend(const Task& t, const std::vector<Board>& boards, const SearchLimits& limits = {});

// The best layout for exactly `gpus` GPUs of `board` in servers of `per_server` GPUs whose NVLink domain
// joins `domain` GPUs (1: none), or nullopt when none fits (`closest` then holds the layout that came
// closest, when one could be estimated). Used for a real host (host_check.h).
std::optional<Option> BestAt(const Task& t, const Board& board, int gpus, int per_server, int domain,
                             std::optional<Option>* closest = nullptr);

// The communication of a layout and the findings about the link it crosses (interconnect.cc).
void DescribeLink(const Task& t, const Board& board, int domain, Option& o);

}  // namespace gp::size
