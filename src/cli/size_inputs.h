// What `gpuprep size` needs from outside src/size/ (cli/size.cc): the catalogue's boards as size::Board
// values (a probed host or a doctor snapshot becomes a size::HostSpec in layers/host_spec.h, shared with
// doctor's host layer), and the configurations' costs from a price table (src/prices/).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "prices/prices.h"
#include "size/render_servers.h"

namespace gp::cli {

struct Context;

// One Board per board model of the catalogue (entries that carry the same `board` are one), in catalogue
// order; data-center entries without a board become a board without memory (listed as unknown). Consumer
// cards are included only when they have a board.
std::vector<size::Board> CatalogueBoards(const manifest::Compat& c);

// Only the boards `filter` names (comma-separated board names, catalogue names or PCI ids); throws
// FlagError("--boards") for a name that matches none.
std::vector<size::Board> FilterBoards(const std::vector<size::Board>& all, const std::string& filter);

// Each board of the catalogue by every name a price may use: the board name, its catalogue entries' names,
// their PCI ids (a PCI id several boards share is in each).
std::vector<std::vector<std::string>> KnownGpuNames(const manifest::Compat& c);

// A file the user named (relative to the working directory), at most `limit` bytes; `what` names it in
// the error. Throws UsageError / FileError.
std::string ReadFile(Context& ctx, const std::string& path, size_t limit, const std::string& what);

// Reads the config.json a task's settings named, if any, into its architecture (size and accept --task).
void LoadTaskConfig(size::Task& t, Context& ctx);

// The price table `--prices FILE` or `--price-per-gpu-hour` names (at most one), or none (both empty).
// Shared by size and watch. Throws FlagError / FileError.
std::optional<prices::Table> LoadPrices(Context& ctx, const std::string& prices_file,
                                        const std::string& flat_price);

// The names a price list may give the GPU NVML calls `nvml_name` ("NVIDIA H100 80GB HBM3"): that name,
// without the "NVIDIA " prefix (the catalogue's name), and that catalogue entry's board and PCI ids.
std::vector<std::string> PriceNamesOfNvmlGpu(const manifest::Compat& c, const std::string& nvml_name);

// The cost of every row and alternative whose board has a price.
size::Costs CostsOf(const size::Recommendation& r, const prices::Table& t);

}  // namespace gp::cli
