// The price table (prices.h).
#include "prices/prices.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "util/error.h"
#include "util/strings.h"

namespace gp::prices {

std::optional<double> Table::For(const std::vector<std::string>& names) const {
  for (const manifest::PriceEntry& e : entries)
    for (const std::string& n : names)
      if (ToLower(e.gpu) == ToLower(n)) return e.per_gpu_hour;
  return flat;
}

namespace {

// The GPUs (numbers into `known`) each lower-case name stands for: a PCI id several boards share stands for
// each of them.
std::map<std::string, std::set<size_t>> GpusOfName(const std::vector<std::vector<std::string>>& known) {
  std::map<std::string, std::set<size_t>> out;
  for (size_t i = 0; i < known.size(); ++i)
    for (const std::string& name : known[i]) out[ToLower(name)].insert(i);
  return out;
}

}  // namespace

Table Load(const std::string& text, const std::string& path,
           const std::vector<std::vector<std::string>>& known) {
  manifest::PricesDoc doc = manifest::ParsePricesDoc(text, path);
  if (!known.empty()) {
    const std::map<std::string, std::set<size_t>> gpus_of = GpusOfName(known);
    std::vector<std::string> names;
    for (const auto& group : known) names.insert(names.end(), group.begin(), group.end());
    std::map<size_t, const manifest::PriceEntry*> priced;  // GPU -> the entry that priced it
    for (const manifest::PriceEntry& e : doc.entries) {
      const auto gpus = gpus_of.find(ToLower(e.gpu));
      if (gpus != gpus_of.end()) {
        for (size_t gpu : gpus->second)
          if (const auto was = priced.find(gpu); was != priced.end())
            throw FileError(path, e.line, e.col,
                            "a second price for the GPU \"" + was->second->gpu + "\" of line " +
                                std::to_string(was->second->line) + " (\"" + e.gpu +
                                "\" names the same GPU); price each GPU once");
        for (size_t gpu : gpus->second) priced.emplace(gpu, &e);
        continue;
      }
      std::string msg = "unknown GPU \"" + e.gpu + "\"";
      if (auto guess = DidYouMean(e.gpu, names))
        msg += " (did you mean \"" + *guess + "\"?)";
      else
        msg += " (name a board as gpuprep size lists it, a catalogue name or a PCI id such as 0x2330)";
      throw FileError(path, e.line, e.col, msg);
    }
  }
  Table t;
  t.path = path;
  t.currency = doc.currency;
  t.entries = std::move(doc.entries);
  return t;
}

Table Flat(const std::string& text) {
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(p) || p <= 0 || p > 1e6 ||
      text.find_first_not_of("0123456789.") != std::string::npos)
    throw FlagError("--price-per-gpu-hour",
                    "expected a price above 0 and at most 1000000 such as 2.49, got \"" + text + "\"");
  Table t;
  t.flat = p;
  return t;
}

Cost CostOf(int gpus, double per_gpu_hour) {
  Cost c;
  c.per_gpu_hour = per_gpu_hour;
  c.per_hour = gpus * per_gpu_hour;
  c.per_month = c.per_hour * kHoursPerMonth;
  return c;
}

double CostOfGpuSeconds(double gpu_seconds, double per_gpu_hour) { return gpu_seconds / 3600 * per_gpu_hour; }

}  // namespace gp::prices
