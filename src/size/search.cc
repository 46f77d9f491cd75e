// FirstFit and Search (search.h): layouts tried in order of the communication they need; multi-server
// counts found by halving an interval, since the per-GPU need of every layout only falls as its
// data-parallel degree grows.
#include "size/search.h"

#include <algorithm>
#include <numeric>

#include "util/error.h"

namespace gp::size {
namespace {

struct Layout {
  Strategy strategy;
  int tp;
};

// The task's framework: DeepSpeed ZeRO when it names one or offloads only the optimizer, else FSDP.
bool DeepSpeedFamily(const Task& t) { return IsDeepSpeed(t.strategy) || t.offload == Offload::kOptimizer; }

// Layouts for `gpus` GPUs, least communication first: replicas (DDP), then sharded optimizer and gradients
// (ZeRO-2 / SHARD_GRAD_OP, the same traffic as DDP), then sharding within a server and replicas across
// (HYBRID_SHARD, several servers only), then everything sharded (ZeRO-3 / FULL_SHARD); the same again with
// tensor parallelism 2, 4 and 8 inside the NVLink domain.
std::vector<Layout> Layouts(const Task& t, int gpus, bool multi, int domain) {
  const bool ds = DeepSpeedFamily(t);
  const Strategy shard3 = ds ? Strategy::kZero3 : Strategy::kFsdp;
  std::vector<Strategy> base;
  if (t.offload == Offload::kOptimizer) {
    base = {Strategy::kZero2, Strategy::kZero3};
  } else if (t.offload == Offload::kParams) {
    if (multi && !ds) base.push_back(Strategy::kFsdpHybrid);
    base.push_back(shard3);
  } else {
    base = {Strategy::kDdp, ds ? Strategy::kZero2 : Strategy::kFsdpGradOp};
    if (multi && !ds) base.push_back(Strategy::kFsdpHybrid);
    base.push_back(shard3);
  }
  if (gpus == 1)
    return {{base.back() == shard3 && t.offload != Offload::kNone ? base.back() : base.front(), 1}};
  std::vector<Layout> out;
  out.reserve(base.size() * 4);  // tp 1, 2, 4 and 8
  for (Strategy s : base) out.push_back({s, 1});
  const Architecture& a = t.arch;
  if (!a.HasShape() || !t.multimodal.vision.empty()) return out;  // a model of parts: data parallel only
  for (int tp : {2, 4, 8}) {
    if (tp > domain || gpus % tp != 0 || a.heads % tp != 0 || (a.kv_heads > 0 && a.kv_heads % tp != 0))
      continue;
    for (Strategy s : base) {
      if (gpus / tp == 1 && s != base.front()) continue;  // one replica: the strategies coincide
      out.push_back({s, tp});
    }
  }
  return out;
}

std::optional<Option> Try(const Task& base, uint64_t memory, int gpus, int per_server, const Layout& l) {
  Task t = base;
  t.gpus = gpus;
  t.tp = l.tp;
  t.pp = 1;
  t.strategy = l.strategy;
  t.c.gpus_per_node = per_server;
  Option o;
  try {
    o.at = EstimateTask(t);
  } catch (const Error&) {
    return std::nullopt;  // a layout this model cannot take
  }
  o.gpus = gpus;
  o.per_server = std::min(gpus, per_server);
  o.servers = (gpus + per_server - 1) / per_server;
  o.strategy = l.strategy;
  o.tp = l.tp;
  o.memory = static_cast<double>(memory);
  return o;
}

bool Fits(const Option& o) { return o.at.per_gpu <= o.memory; }

}  // namespace

std::optional<Option> FirstFit(const Task& t, uint64_t memory, int gpus, int per_server, int domain,
                               std::optional<Option>* closest) {
  for (const Layout& l : Layouts(t, gpus, gpus > per_server, domain)) {
    auto o = Try(t, memory, gpus, per_server, l);
    if (!o) continue;
    if (Fits(*o)) return o;
    if (closest && (!*closest || o->at.per_gpu < (*closest)->at.per_gpu)) *closest = o;
  }
  return std::nullopt;
}

namespace {

// The smallest multiple of `unit` GPUs in [lo, hi] (in units) some layout fits, or nullopt.
std::optional<Option> SmallestMulti(const Task& t, uint64_t memory, int unit, int lo, int hi, int per_server,
                                    int domain, std::optional<Option>* closest) {
  if (lo > hi) return std::nullopt;
  int best = hi + 1;
  for (const Layout& l : Layouts(t, unit * hi, true, domain)) {
    auto fits = [&](int k) {
      auto o = Try(t, memory, unit * k, per_server, l);
      return o && Fits(*o);
    };
    const int top = std::min(hi, best - 1);
    if (top < lo || !fits(top)) continue;
    int a = lo - 1, b = top;  // fits(b), and a < lo or !fits(a)
    while (b - a > 1) {
      const int mid = a + (b - a) / 2;
      (fits(mid) ? b : a) = mid;
    }
    best = b;
  }
  if (best > hi) {
    if (closest) FirstFit(t, memory, unit * hi, per_server, domain, closest);
    return std::nullopt;
  }
  return FirstFit(t, memory, unit * best, per_server, domain, nullptr);
}

}  // namespace

Found Search(const Task& t, const Board& b, int max_servers) {
  Found f;
  const uint64_t mem = b.MemoryBytes();
  for (int s : b.server_sizes) {
    f.best = FirstFit(t, mem, s, s, b.DomainIn(s), &f.closest);
    if (f.best) return f;
  }
  if (!b.MultiServer()) return f;
  const int s = b.LargestServer();
  const int unit = std::lcm(8, s);
  const int lo = (2 * s + unit - 1) / unit, hi = max_servers * s / unit;
  f.best = SmallestMulti(t, mem, unit, lo, hi, s, b.DomainIn(s), &f.closest);
  return f;
}

bool Smaller(const Option& a, const Option& b) {
  if (a.gpus != b.gpus) return a.gpus < b.gpus;
  if (a.servers != b.servers) return a.servers < b.servers;
  return a.memory < b.memory;
}

}  // namespace gp::size
