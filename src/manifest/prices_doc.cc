// ParsePricesDoc (prices_doc.h).
#include "manifest/prices_doc.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "manifest/fields.h"
#include "manifest/tree.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

constexpr size_t kMaxEntries = 4096;

// A plain decimal number: digits with at most one '.', no sign, exponent, hex or infinity.
double Price(const Node& n) {
  const std::string v = AsString(n);
  const bool plain = !v.empty() && v.size() <= 32 &&
                     v.find_first_not_of("0123456789.") == std::string::npos &&
                     std::count(v.begin(), v.end(), '.') <= 1 && v.front() != '.' && v.back() != '.';
  if (!plain) Fail(n.mark, "per_gpu_hour must be a price such as 2.49, got " + QuoteToken(v));
  const double p = std::strtod(v.c_str(), nullptr);
  if (!std::isfinite(p) || p <= 0 || p > 1e6)
    Fail(n.mark, "per_gpu_hour must be above 0 and at most 1000000");
  return p;
}

}  // namespace

PricesDoc ParsePricesDoc(const std::string& text, const std::string& display_path) {
  Node root = ParseTree(text, display_path);
  Fields top(root, "", nullptr);
  CheckHeader(top, {"Prices"});
  top.Only({"apiVersion", "kind", "metadata", "currency", "prices"});
  PricesDoc doc;
  Fields meta(top.Require("metadata"), "metadata", nullptr);
  meta.Only({"name", "description"});
  doc.name = AsName(meta.Require("name"), "prices name");
  if (const Node* d = meta.Get("description")) doc.description = AsLine(*d);
  const Node& cur = top.Require("currency");
  doc.currency = AsString(cur);
  if (doc.currency.size() != 3 ||
      doc.currency.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos)
    Fail(cur.mark, "currency must be three capital letters (an ISO 4217 code such as USD), got " +
                       QuoteToken(doc.currency));
  const Node& list = top.Require("prices");
  const std::vector<Node>& items = AsList(list);
  if (items.empty()) Fail(list.mark, "prices: name at least one GPU");
  if (items.size() > kMaxEntries) Fail(list.mark, "prices: more than 4096 entries");
  for (size_t i = 0; i < items.size(); ++i) {
    Fields f(items[i], "prices[" + std::to_string(i) + "]", nullptr);
    f.Only({"gpu", "per_gpu_hour"});
    const Node& gpu = f.Require("gpu");
    PriceEntry e;
    e.gpu = AsLine(gpu);
    if (Trim(e.gpu).empty() || e.gpu.size() > 200) Fail(gpu.mark, "gpu must name a GPU in at most 200 bytes");
    e.per_gpu_hour = Price(f.Require("per_gpu_hour"));
    e.line = gpu.mark.line;
    e.col = gpu.mark.col;
    for (const PriceEntry& seen : doc.entries)
      if (ToLower(seen.gpu) == ToLower(e.gpu))
        Fail(gpu.mark, "a second price for " + QuoteToken(e.gpu) + " (the first is at line " +
                           std::to_string(seen.line) + ")");
    doc.entries.push_back(std::move(e));
  }
  return doc;
}

}  // namespace gp::manifest
