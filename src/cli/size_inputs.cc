// The catalogue, hosts and prices as `gpuprep size` sees them (size_inputs.h).
#include "cli/size_inputs.h"

#include <algorithm>

#include "cli/task_doc.h"
#include "layers/host_spec.h"
#include "manifest/loader.h"
#include "manifest/tree.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

void AddUnique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

bool Names(const size::Board& b, const std::string& lower) {
  if (ToLower(b.name) == lower) return true;
  for (const auto& n : b.entries)
    if (ToLower(n) == lower) return true;
  return std::find(b.pci_ids.begin(), b.pci_ids.end(), lower) != b.pci_ids.end();
}

}  // namespace

std::vector<size::Board> CatalogueBoards(const manifest::Compat& c) {
  std::vector<size::Board> out;
  for (const manifest::GpuModel& g : c.gpus) {
    if (g.board.empty() && !g.datacenter) continue;
    const std::string name = g.board.empty() ? g.name : g.board;
    auto it = std::find_if(out.begin(), out.end(), [&](const size::Board& b) { return b.name == name; });
    if (it == out.end()) {
      out.push_back(layers::BoardOf(g));
      it = out.end() - 1;
    } else if (it->memory_mib == 0 && g.memory_mib > 0) {  // an unsized entry of the name came first
      size::Board sized = layers::BoardOf(g);
      sized.entries = it->entries;
      sized.pci_ids = it->pci_ids;
      *it = sized;
    }
    AddUnique(it->entries, g.name);
    for (const auto& id : g.pci_ids) AddUnique(it->pci_ids, id);
  }
  return out;
}

std::vector<size::Board> FilterBoards(const std::vector<size::Board>& all, const std::string& filter) {
  std::vector<size::Board> out;
  for (const std::string& raw : Split(filter, ',')) {
    const std::string want = ToLower(std::string(Trim(raw)));
    if (want.empty()) continue;
    bool hit = false;
    for (const size::Board& b : all)
      if (Names(b, want)) {
        hit = true;
        if (std::none_of(out.begin(), out.end(), [&](const size::Board& x) { return x.name == b.name; }))
          out.push_back(b);
      }
    if (!hit) {
      std::vector<std::string> names;
      names.reserve(all.size());
      for (const size::Board& b : all) names.push_back(b.name);
      std::string msg = "no board \"" + std::string(Trim(raw)) + "\"";
      if (auto guess = DidYouMean(std::string(Trim(raw)), names))
        msg += " (did you mean \"" + *guess + "\"?)";
      throw FlagError("--boards", msg);
    }
  }
  if (out.empty())
    throw FlagError("--boards", "\"" + filter + "\" names no board (board names, commas between)");
  return out;
}

std::vector<std::vector<std::string>> KnownGpuNames(const manifest::Compat& c) {
  std::vector<std::string> boards;
  std::vector<std::vector<std::string>> out;
  for (const manifest::GpuModel& g : c.gpus) {
    const std::string board = g.board.empty() ? g.name : g.board;
    auto at = std::find(boards.begin(), boards.end(), board);
    if (at == boards.end()) {
      boards.push_back(board);
      out.push_back({board});
      at = boards.end() - 1;
    }
    std::vector<std::string>& names = out[static_cast<size_t>(at - boards.begin())];
    AddUnique(names, g.name);
    for (const auto& id : g.pci_ids) AddUnique(names, id);
  }
  return out;
}

size::Costs CostsOf(const size::Recommendation& r, const prices::Table& t) {
  size::Costs costs;
  costs.currency = t.currency;
  costs.hours_per_month = prices::kHoursPerMonth;
  auto names = [](const size::Board& b) {
    std::vector<std::string> n = {b.name};
    n.insert(n.end(), b.entries.begin(), b.entries.end());
    n.insert(n.end(), b.pci_ids.begin(), b.pci_ids.end());
    return n;
  };
  auto cost = [](int gpus, double price) {
    const prices::Cost c = prices::CostOf(gpus, price);
    return size::RowCost{c.per_gpu_hour, c.per_hour, c.per_month};
  };
  for (const size::BoardRow& row : r.rows) {
    const auto price = t.For(names(row.board));
    if (!price) continue;
    if (row.best) costs.by_board[row.board.name] = cost(row.best->gpus, *price);
    for (const size::Alternative& a : row.alternatives)
      costs.by_change[size::ChangeKey(a)] = cost(a.option.gpus, *price);
  }
  for (const size::Alternative& a : r.alternatives) {
    for (const size::BoardRow& row : r.rows)
      if (row.board.name == a.board)
        if (const auto price = t.For(names(row.board)))
          costs.by_change[size::ChangeKey(a)] = cost(a.option.gpus, *price);
  }
  return costs;
}

std::string ReadFile(Context& ctx, const std::string& path, size_t limit, const std::string& what) {
  if (!ctx.local_fs) throw UsageError("cannot read " + path + ": no filesystem here");
  const std::string abs = sys::AbsoluteFromCwd(path);
  std::string why;
  auto text = sys::ReadWithin(*ctx.local_fs, abs, path, limit, why);
  if (!text) throw UsageError(why + " for " + what);
  return std::move(*text);
}

std::optional<prices::Table> LoadPrices(Context& ctx, const std::string& prices_file,
                                        const std::string& flat_price) {
  if (!prices_file.empty() && !flat_price.empty())
    throw FlagError("--price-per-gpu-hour", "give --prices FILE or --price-per-gpu-hour, not both");
  if (!flat_price.empty()) return prices::Flat(flat_price);
  if (prices_file.empty()) return std::nullopt;
  const std::string text = ReadFile(ctx, prices_file, manifest::kMaxManifestBytes, "a price list");
  return prices::Load(text, prices_file, KnownGpuNames(manifest::EmbeddedCompat()));
}

std::vector<std::string> PriceNamesOfNvmlGpu(const manifest::Compat& c, const std::string& nvml_name) {
  std::vector<std::string> out = {nvml_name};
  const std::string prefix = "NVIDIA ";
  const std::string bare = nvml_name.rfind(prefix, 0) == 0 ? nvml_name.substr(prefix.size()) : nvml_name;
  AddUnique(out, bare);
  for (const manifest::GpuModel& g : c.gpus) {
    if (ToLower(g.name) != ToLower(bare)) continue;
    if (!g.board.empty()) AddUnique(out, g.board);
    for (const auto& id : g.pci_ids) AddUnique(out, id);
  }
  return out;
}

void ValidatePricesDocument(const std::string& text, const std::string& path) {
  prices::Load(text, path, KnownGpuNames(manifest::EmbeddedCompat()));
}

}  // namespace gp::cli
