// BoardAlternatives and TaskAlternatives (search.h): when nothing fits, the same search for the task with
// one setting changed (checkpointing, LoRA, QLoRA, parameter offload, a smaller micro-batch, more servers).
#include <algorithm>
#include <map>
#include <tuple>

#include "size/search.h"
#include "size/settings.h"
#include "util/error.h"

namespace gp::size {
namespace {

struct Change {
  std::string flag;  // as the user would type it
  Task task;
};

// `flag value` applied through the same settings code as the command line, then checked by Finish; a
// change the task cannot take (LoRA for a vision network) is left out.
void Add(std::vector<Change>& out, const Task& t, const std::string& key, const std::string& flag,
         const std::string& value) {
  Task c = t;
  try {
    Apply(c, Setting{key, value, Origin{"", 0, 0, flag}});
    Finish(c);
  } catch (const Error&) {
    return;
  }
  out.push_back({flag + " " + value, std::move(c)});
}

std::vector<Change> Changes(const Task& t) {
  std::vector<Change> out;
  const bool shaped = t.arch.HasShape();
  if (shaped && t.checkpointing != Checkpointing::kFull)
    Add(out, t, "grad_checkpointing", "--grad-checkpointing", "full");
  if (shaped && t.method == Method::kFull) Add(out, t, "method", "--method", "lora");
  if (shaped && t.method != Method::kQlora) Add(out, t, "method", "--method", "qlora");
  if (t.offload == Offload::kNone) {  // parameter offload needs a sharded strategy (Finish checks it)
    Task p = t;
    p.strategy = IsDeepSpeed(t.strategy) ? Strategy::kZero3 : Strategy::kFsdp;
    Add(out, p, "offload", "--offload", "params");
  }
  if (t.micro_batch > 1) Add(out, t, "batch.micro_batch", "--micro-batch", "1");
  return out;
}

// The smallest fitting configuration of `t` over `boards`, or nullopt; boards alike in memory and build
// are searched once.
std::optional<std::pair<const Board*, Option>> Best(const Task& t, const std::vector<Board>& boards,
                                                    int max_servers) {
  std::optional<std::pair<const Board*, Option>> best;
  std::map<std::tuple<uint64_t, std::vector<int>, int, bool>, bool> seen;
  for (const Board& b : boards) {
    if (b.memory_mib == 0 ||
        !seen.emplace(std::make_tuple(b.memory_mib, b.server_sizes, b.nvlink, b.MultiServer()), true).second)
      continue;
    Found f = Search(t, b, max_servers);
    if (f.best && (!best || Smaller(*f.best, best->second))) best = std::make_pair(&b, *f.best);
  }
  return best;
}

Alternative Make(const std::string& change, const Task& t, const Board& b, Option o) {
  DescribeLink(t, b, b.DomainIn(o.per_server), o);
  return {change, b.name, std::move(o)};
}

// More servers than the limit: the same task searched up to 16 times as many servers (at most 65536 GPUs).
std::optional<Alternative> MoreServers(const Task& t, const Board& b, const SearchLimits& limits) {
  if (!b.MultiServer()) return std::nullopt;
  const int more = std::min(limits.max_servers * 16, 65536 / b.LargestServer());
  if (more <= limits.max_servers) return std::nullopt;
  Found f = Search(t, b, more);
  if (!f.best) return std::nullopt;
  return Make("--max-servers " + std::to_string(f.best->servers), t, b, *f.best);
}

}  // namespace

std::vector<Alternative> BoardAlternatives(const Task& t, const Board& b, const SearchLimits& limits) {
  std::vector<Alternative> out;
  for (const Change& c : Changes(t)) {
    Found f = Search(c.task, b, limits.max_servers);
    if (f.best) out.push_back(Make(c.flag, c.task, b, *f.best));
  }
  if (auto more = MoreServers(t, b, limits)) out.push_back(*more);
  std::stable_sort(out.begin(), out.end(),
                   [](const Alternative& x, const Alternative& y) { return Smaller(x.option, y.option); });
  if (out.size() > 3) out.resize(3);
  return out;
}

std::vector<Alternative> TaskAlternatives(const Task& t, const std::vector<Board>& boards,
                                          const SearchLimits& limits) {
  std::vector<Alternative> out;
  for (const Change& c : Changes(t))
    if (auto best = Best(c.task, boards, limits.max_servers))
      out.push_back(Make(c.flag, c.task, *best->first, best->second));
  return out;
}

}  // namespace gp::size
