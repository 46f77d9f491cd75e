// Text and JSON of the servers that fit and the host they need (render_servers.h).
#include "size/render_servers.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "size/format.h"
#include "util/input.h"

namespace gp::size {
namespace {

using nlohmann::ordered_json;

std::string Money(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 100 ? "%.2f" : "%.0f", x);
  return buf;
}

std::string LayoutText(const Option& o) {
  return std::string(Name(o.strategy)) + (o.tp > 1 ? " tp" + std::to_string(o.tp) : "");
}

std::string Config(const Option& o) {
  return std::to_string(o.gpus) + " GPU" + (o.gpus > 1 ? "s" : "") + " (" + std::to_string(o.servers) +
         " x " + std::to_string(o.per_server) + ")";
}

std::string Memory(const Board& b) {
  return std::to_string(b.memory_mib) + " MiB" + (b.Approximate() ? "~" : " ");
}

std::string Pad(const std::string& s, size_t n) {
  return s.size() >= n ? s + " " : s + std::string(n - s.size(), ' ');
}

const RowCost* Find(const std::map<std::string, RowCost>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

ordered_json OptionJson(const Option& o) {
  return {{"gpus", o.gpus},
          {"servers", o.servers},
          {"gpus_per_server", o.per_server},
          {"strategy", Name(o.strategy)},
          {"tp", o.tp},
          {"per_gpu_bytes", WholeBytes(o.at.per_gpu)},
          {"memory_bytes", WholeBytes(o.memory)},
          {"spare_bytes", WholeBytes(o.Spare())},
          {"lower_bound", o.at.lower_bound},
          {"link", o.link},
          {"traffic",
           {{"bytes_per_step", WholeBytes(o.traffic.bytes)},
            {"network_bytes_per_step", WholeBytes(o.traffic.network_bytes)},
            {"formula", o.traffic.formula}}},
          {"flags", o.flags}};
}

ordered_json CostJson(const RowCost* c) {
  if (!c) return nullptr;
  return {{"per_gpu_hour", c->per_gpu_hour}, {"per_hour", c->per_hour}, {"per_month", c->per_month}};
}

// A board that does not fit up to the server limit: why, and each change that would make it fit.
void ServersTextUnfitRow(std::ostringstream& out, const Recommendation& r, const BoardRow& row,
                         const Costs& costs, const std::string& cur) {
  out << "does not fit up to " << r.limits.max_servers << " servers: " << row.why_not << "\n";
  for (const Alternative& a : row.alternatives) {
    out << "      would fit with " << a.change << ": " << Config(a.option) << ", " << LayoutText(a.option)
        << ", " << Gb(a.option.at.per_gpu) << " per GPU";
    if (const RowCost* c = Find(costs.by_change, ChangeKey(a)))
      out << ", " << Money(c->per_hour) << " / " << Money(c->per_month) << cur;
    out << "\n";
  }
}

// A board's smallest configuration that fits: GPUs, layout, per-GPU need, spare memory, link and price.
void ServersTextFitRow(std::ostringstream& out, const BoardRow& row, const Option& o, const Costs& costs,
                       bool priced) {
  out << Pad(Config(o), 22) << Pad(LayoutText(o), 18)
      << Pad(GbNum(o.at.per_gpu) + (o.at.lower_bound ? "+" : ""), 10) << Pad(GbNum(o.Spare()), 10)
      << (priced ? Pad(o.link, 24) : o.link);
  if (const RowCost* c = Find(costs.by_board, row.board.name))
    out << Money(c->per_hour) << " / " << Money(c->per_month);
  out << "\n";
  for (const std::string& f : o.flags) out << "      " << f << "\n";
}

// After the table: the boards without a sourced memory size, and the changes that would let a board fit
// in one server when none does.
void ServersTextTail(std::ostringstream& out, const Recommendation& r, const Costs& costs,
                     const std::string& cur) {
  if (!r.unknown.empty()) {
    out << "  no sourced memory size, not judged:";
    for (size_t i = 0; i < r.unknown.size(); ++i) out << (i ? ", " : " ") << r.unknown[i];
    out << "\n";
  }
  if (!r.alternatives.empty()) {
    out << "\nNO BOARD FITS IN ONE SERVER; changes that shrink it (the smallest configuration each then "
           "gets):\n";
    for (const Alternative& a : r.alternatives) {
      out << "  " << Pad(a.change, 26) << a.board << ": " << Config(a.option) << ", " << LayoutText(a.option)
          << ", " << Gb(a.option.at.per_gpu) << " per GPU";
      if (const RowCost* c = Find(costs.by_change, ChangeKey(a)))
        out << ", " << Money(c->per_hour) << " / " << Money(c->per_month) << cur;
      out << "\n";
    }
  }
}

}  // namespace

std::string RenderServersText(const Recommendation& r, const Costs& costs, bool verbose) {
  std::ostringstream out;
  if (!r.not_recommended.empty()) {
    out << "SERVERS THAT FIT: none recommended: the per-GPU figure is a lower bound, and a lower bound that "
           "fits a board does not say the task does\n  "
        << r.not_recommended << "\n";
    return out.str();
  }
  const bool priced = costs.Any();
  const std::string cur = costs.currency.empty() ? "" : " " + TerminalSafe(costs.currency);
  out << "SERVERS THAT FIT: the smallest configuration per board, its per-GPU need against the memory "
         "nvidia-smi "
         "reports\n";
  out << "  " << Pad("BOARD", 26) << Pad("MEMORY", 12) << Pad("GPUS (SERVERS x GPUS)", 22)
      << Pad("LAYOUT", 18) << Pad("PER GPU", 10) << Pad("SPARE", 10)
      << (priced ? Pad("LINK", 24) + "PER HOUR / MONTH" + cur : "LINK") << "\n";
  bool approx = false, lower = false;
  for (const BoardRow& row : r.rows) {
    approx = approx || row.board.Approximate();
    out << "  " << Pad(row.board.name + (row.board.datacenter ? "" : " *"), 26) << Pad(Memory(row.board), 12);
    if (!row.best) {
      ServersTextUnfitRow(out, r, row, costs, cur);
    } else {
      const Option& o = *row.best;
      lower = lower || o.at.lower_bound;
      ServersTextFitRow(out, row, o, costs, priced);
    }
    if (verbose) {
      out << "      memory: " << row.board.memory_kind << ", " << row.board.memory_source << "\n";
      out << "      interconnect: " << row.board.link_source << "\n";
    }
  }
  out << "  (GB, 10^9 bytes; * consumer card";
  if (approx) out << "; ~ approximate memory: a marketed, rounded or system size";
  if (lower) out << "; + a lower bound: activations not estimated";
  out << ")\n";
  ServersTextTail(out, r, costs, cur);
  return out.str();
}

ordered_json ServersJson(const Task& t, const Recommendation& r, const Costs& costs) {
  ordered_json boards = ordered_json::array();
  for (const BoardRow& row : r.rows) {
    const Board& b = row.board;
    ordered_json j = {{"board", b.name},
                      {"datacenter", b.datacenter},
                      {"pci_ids", b.pci_ids},
                      {"memory_mib", b.memory_mib},
                      {"memory_kind", b.memory_kind},
                      {"memory_approximate", b.Approximate()},
                      {"memory_unified", b.Unified()},
                      {"memory_source", b.memory_source},
                      {"form", b.form},
                      {"server_sizes", b.server_sizes},
                      {"nvlink", b.nvlink},
                      {"p2p", b.p2p},
                      {"link_source", b.link_source},
                      {"fits", row.best.has_value()}};
    j["option"] = row.best ? OptionJson(*row.best) : ordered_json(nullptr);
    j["cost"] = CostJson(Find(costs.by_board, b.name));
    j["host"] = row.best ? HostNeedJson(NeedFor(t, row.best->at, row.best->per_server, row.best->servers,
                                                static_cast<double>(b.MemoryBytes())))
                         : ordered_json(nullptr);
    j["why_not"] = row.best ? ordered_json(nullptr) : ordered_json(row.why_not);
    ordered_json alts = ordered_json::array();
    for (const Alternative& a : row.alternatives)
      alts.push_back({{"change", a.change},
                      {"option", OptionJson(a.option)},
                      {"cost", CostJson(Find(costs.by_change, ChangeKey(a)))}});
    j["alternatives"] = alts;
    boards.push_back(std::move(j));
  }
  ordered_json alts = ordered_json::array();
  for (const Alternative& a : r.alternatives)
    alts.push_back({{"change", a.change},
                    {"board", a.board},
                    {"option", OptionJson(a.option)},
                    {"cost", CostJson(Find(costs.by_change, ChangeKey(a)))}});
  ordered_json reference = ordered_json::array();
  for (const ReferenceServer& s : ReferenceServers())
    reference.push_back({{"name", s.name},
                         {"gpus", s.gpus},
                         {"cpus", s.cpus},
                         {"vcpus", s.vcpus},
                         {"ram_bytes", s.ram},
                         {"ram", s.ram_text},
                         {"storage", s.storage},
                         {"source", s.source}});
  return {{"max_servers", r.limits.max_servers},
          {"not_recommended",
           r.not_recommended.empty() ? ordered_json(nullptr) : ordered_json(r.not_recommended)},
          {"currency", costs.Any() ? ordered_json(costs.currency) : ordered_json(nullptr)},
          {"hours_per_month", costs.Any() ? ordered_json(costs.hours_per_month) : ordered_json(nullptr)},
          {"boards", boards},
          {"unknown_memory", r.unknown},
          {"alternatives", alts},
          {"reference_servers", reference}};
}

ordered_json HostNeedJson(const HostNeed& n) {
  return {{"workload", RatioFor(n.workload).name},
          {"gpus_per_server", n.gpus},
          {"servers", n.servers},
          {"cpu_cores", n.cpu_cores},
          {"cpu_formula", n.cpu_formula},
          {"cpu_source", kCpuSource},
          {"ram_floor_bytes", WholeBytes(n.ram_floor)},
          {"ram_offload_bytes", WholeBytes(n.ram_offload)},
          {"ram_embeddings_bytes", WholeBytes(n.ram_embeddings)},
          {"ram_min_bytes", WholeBytes(n.RamMin())},
          {"ram_source", kRamSource},
          {"checkpoint_bytes", WholeBytes(n.checkpoint)},
          {"checkpoint_formula", n.checkpoint_formula},
          {"checkpoints_kept", n.kept},
          {"base_weights_bytes", WholeBytes(n.base_weights)},
          {"dataset_bytes", WholeBytes(n.dataset)},
          {"storage_bytes", WholeBytes(n.Storage())},
          {"notes", n.notes}};
}

}  // namespace gp::size
