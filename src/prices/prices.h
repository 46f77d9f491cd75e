// GPU prices, shared by `gpuprep size` (what each configuration costs) and `gpuprep watch` (what idle GPUs
// cost): a user's price list (`--prices FILE`, a kind: Prices document, manifest/prices_doc.h) or one
// price for every GPU (`--price-per-gpu-hour`). gpuprep ships no prices. Plain values; the CLI reads files.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/prices_doc.h"

namespace gp::prices {

// A month of GPU-hours: 8760 hours a year / 12.
constexpr double kHoursPerMonth = 730;

struct Table {
  std::string path;      // the file as the user named it; "" for --price-per-gpu-hour
  std::string currency;  // "USD"; "" for --price-per-gpu-hour
  std::vector<manifest::PriceEntry> entries;
  std::optional<double> flat;  // --price-per-gpu-hour: every GPU

  // The price per GPU-hour of a GPU known by these names (a board name, catalogue entry names, PCI ids
  // "0x2330"): the first entry naming any of them (case-insensitive), else the flat price, else nullopt.
  std::optional<double> For(const std::vector<std::string>& names) const;
};

// Parses and checks a Prices document. `known`: each GPU (board) the catalogue knows, by all its names
// (board name, catalogue names, PCI ids; a name in several groups stands for each of those GPUs). With it, an
// entry naming none of them is an error at its position: `unknown GPU "H100X" (did you mean "H100 SXM5
// 80GB"?)`, and so is a second entry for a GPU already priced under another of its names. Throws
// gp::FileError.
Table Load(const std::string& text, const std::string& path,
           const std::vector<std::vector<std::string>>& known);

// `text` as --price-per-gpu-hour gives it ("2.49"); throws gp::FlagError.
Table Flat(const std::string& text);

struct Cost {
  double per_gpu_hour = 0;
  double per_hour = 0;   // gpus x per_gpu_hour
  double per_month = 0;  // per_hour x kHoursPerMonth
};
Cost CostOf(int gpus, double per_gpu_hour);

// What `gpu_seconds` of a GPU's time cost at `per_gpu_hour` (watch: the idle time of a run).
double CostOfGpuSeconds(double gpu_seconds, double per_gpu_hour);

}  // namespace gp::prices
