#include "accept/table.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::accept {
namespace {

// NVLink links per GPU are not a quantity of the table: the GPU catalogue holds them (catalogue_links.h).
const std::set<std::string> kQuantities{"matmul_bf16", "hbm_copy", "h2d_gen4", "h2d_gen5",
                                        "d2h_gen4",    "d2h_gen5", "p2p",      "all_reduce"};
const std::set<std::string> kUnits{"TFLOP/s", "TB/s", "GB/s"};

// A plain decimal figure ("794.5", "48"): digits with at most one point, no sign, no exponent.
std::optional<double> Figure(const std::string& s) {
  if (s.empty() || s.size() > 32 || s.front() == '.' || s.back() == '.') return std::nullopt;
  int points = 0;
  for (char c : s) {
    if (c == '.') {
      ++points;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (points > 1) return std::nullopt;
  const double d = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// "owner/repo@commit:path:line" -> the line number; 0 when `s` is not of that form.
int RepoLine(const std::string& s) {
  const size_t at = s.find('@');
  const size_t last = s.rfind(':');
  if (at == std::string::npos || s.find('/') > at || last == std::string::npos || last < at) return 0;
  auto n = ParseUnsigned(std::string_view(s).substr(last + 1));
  if (!n || *n == 0 || *n > 1000000) return 0;
  return s.find(':', at) < last ? static_cast<int>(*n) : 0;
}

// "0.9 x typical": the factor and the level it scales.
bool ParseRule(const std::string& rule, double* factor, std::string* level) {
  auto words = SplitWords(rule);
  if (words.size() != 3 || words[1] != "x") return false;
  auto f = Figure(words[0]);
  if (!f || *f <= 0 || *f > 10) return false;
  *factor = *f;
  *level = words[2];
  return *level == "typical" || *level == "floor" || *level == "peak";
}

struct RowError {
  const std::string& path;
  int line;
  [[noreturn]] void Col(int col, const std::string& m) const { throw FileError(path, line, col, m); }
};

Value ParseRow(const std::vector<std::string>& c, const RowError& e) {
  Value v;
  v.line = e.line;
  v.device = c[0];
  if (v.device != "*" && !(v.device.size() == 6 && StartsWith(v.device, "0x") &&
                           v.device.find_first_not_of("0123456789abcdef", 2) == std::string::npos))
    e.Col(1, "device must be a PCI device id like 0x2330, or *");
  if (c[1] != "*") {
    auto n = ParseUnsigned(c[1]);
    if (!n || *n == 0 || *n > 1024) e.Col(2, "gpus must be a GPU count from 1 to 1024, or *");
    v.gpus = static_cast<int>(*n);
  }
  v.topology = c[2];
  if (v.topology != "nvswitch" && v.topology != "nvlink-bridge" && v.topology != "pcie" && v.topology != "*")
    e.Col(3, "topology must be nvswitch, nvlink-bridge, pcie or *");
  v.quantity = c[3];
  if (!kQuantities.count(v.quantity)) e.Col(4, "unknown quantity " + QuoteToken(v.quantity));
  v.level = c[4];
  if (v.level != "typical" && v.level != "floor" && v.level != "peak")
    e.Col(5, "level must be typical, floor or peak");
  v.unit = c[6];
  if (!kUnits.count(v.unit)) e.Col(7, "unit must be TFLOP/s, TB/s, GB/s or links");
  if (c[7] != "-") {
    auto n = ParseUnsigned(c[7]);
    if (!n || *n == 0) e.Col(8, "size must be a message size in bytes, or -");
    v.size = *n;
  }
  v.kind = c[8];
  v.source = c[9];
  v.excerpt = c[10] == "-" ? "" : c[10];
  if (v.kind == "quoted") {
    auto f = Figure(c[5]);
    if (!f || *f <= 0) e.Col(6, "a quoted value must be a plain positive figure as its source writes it");
    v.value = *f;
    v.text = c[5];
    v.source_line = RepoLine(v.source);
    if (!v.source_line && !StartsWith(v.source, "https://"))
      e.Col(10, "a quoted value needs its source: owner/repo@commit:path:line or an https:// URL");
    if (v.excerpt.empty() || v.excerpt.find('/') != std::string::npos || !EndsWith(v.excerpt, ".txt"))
      e.Col(11, "a quoted value needs its excerpt: a .txt file beside the table");
  } else if (v.kind == "derived") {
    double factor = 0;
    std::string level;
    if (c[5] != "-") e.Col(6, "a derived value is computed from its rule: write -");
    if (!ParseRule(v.source, &factor, &level) || level == v.level)
      e.Col(10, "a derived value needs its rule: \"FACTOR x typical|floor|peak\" (another level of the row)");
  } else if (v.kind == "measured") {
    auto f = Figure(c[5]);
    if (!f || *f <= 0) e.Col(6, "a measured value must be a plain positive figure");
    v.value = *f;
    v.text = c[5];
    if (!StartsWith(v.source, "tests/fixtures/accept/"))
      e.Col(10, "a measured value names its committed recording under tests/fixtures/accept/");
  } else {
    e.Col(9, "kind must be quoted, derived or measured");
  }
  return v;
}

bool SameRow(const Value& a, const Value& b) {
  return a.device == b.device && a.gpus == b.gpus && a.topology == b.topology && a.quantity == b.quantity;
}

void ComputeDerived(Table& t, const std::string& path) {
  for (auto& v : t.values) {
    if (v.kind != "derived") continue;
    double factor = 0;
    std::string level;
    ParseRule(v.source, &factor, &level);
    const Value* base = nullptr;
    for (const auto& o : t.values)
      if (SameRow(o, v) && o.level == level && o.kind != "derived") base = &o;
    if (!base)
      throw FileError(path, v.line, 10,
                      "the rule's " + level + " is not a quoted or measured value of this row");
    v.value = factor * base->value;
    v.size = v.size ? v.size : base->size;
  }
}

}  // namespace

const Value* Table::Find(const std::string& device, int gpus, const std::string& topology,
                         const std::string& quantity, const std::string& level) const {
  auto match = [&](const Value& v, bool any) {
    if (v.quantity != quantity || v.level != level) return false;
    if (!any) return v.device == device && v.gpus == gpus && v.topology == topology;
    return (v.device == device || v.device == "*") && (v.gpus == 0 || v.gpus == gpus) &&
           (v.topology == "*" || v.topology == topology);
  };
  for (const auto& v : values)
    if (match(v, false)) return &v;
  if (level != "peak") return nullptr;
  for (const auto& v : values)  // a board's own peak before one for every board
    if (v.device == device && match(v, true)) return &v;
  for (const auto& v : values)
    if (match(v, true)) return &v;
  return nullptr;
}

bool Table::HasBoard(const std::string& device, int gpus, const std::string& topology) const {
  for (const auto& v : values)
    if (v.device == device && v.gpus == gpus && v.topology == topology && v.level != "peak") return true;
  return false;
}

Table LoadTable(std::string_view text, const std::string& path) {
  if (auto at = InvalidUtf8At(text))
    throw FileError(path, 1, 1, "invalid UTF-8 at byte " + std::to_string(*at));
  Table t;
  int line = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++line;
    if (raw.empty() || raw[0] == '#') continue;
    RowError e{path, line};
    if (auto at = ControlCharAt(raw, /*allow_text=*/true); at && raw[*at] != '\t')
      e.Col(static_cast<int>(*at) + 1, "a control character");
    auto cols = Split(raw, '\t');
    if (cols.size() != 11)
      e.Col(1, "a row has 11 columns (tab-separated), not " + std::to_string(cols.size()));
    Value v = ParseRow(cols, e);
    for (const auto& o : t.values)
      if (SameRow(o, v) && o.level == v.level)
        e.Col(1, "duplicate row: line " + std::to_string(o.line) + " has this " + v.level);
    t.values.push_back(std::move(v));
  }
  ComputeDerived(t, path);
  return t;
}

std::vector<std::string> CheckExcerpts(
    const Table& t, const std::function<std::optional<std::string>(const std::string& name)>& read) {
  std::vector<std::string> problems;
  for (const auto& v : t.values) {
    if (v.kind != "quoted") continue;
    const std::string where = std::string(kTablePath) + ":" + std::to_string(v.line) + ": ";
    auto text = read(v.excerpt);
    if (!text) {
      problems.push_back(where + "excerpt " + v.excerpt + " is missing");
      continue;
    }
    if (text->size() > 1024) problems.push_back(where + "excerpt " + v.excerpt + " is larger than 1 KiB");
    auto lines = Split(*text, '\n');
    // The first line names the source: "# owner/repo@commit:path" or "# https://...".
    const std::string cited = v.source_line ? v.source.substr(0, v.source.rfind(':')) : v.source;
    if (lines.empty() || lines[0] != "# " + cited) {
      problems.push_back(where + "excerpt " + v.excerpt + " does not start with \"# " + cited + "\"");
      continue;
    }
    const std::string prefix = v.source_line ? std::to_string(v.source_line) + ": " : "";
    bool found = false;
    for (size_t i = 1; i < lines.size() && !found; ++i) {
      if (!StartsWith(lines[i], prefix)) continue;
      // The figure as a token: not part of a longer number.
      const std::string& l = lines[i];
      for (size_t at = l.find(v.text, prefix.size()); at != std::string::npos && !found;
           at = l.find(v.text, at + 1)) {
        auto digit = [](char c) { return (c >= '0' && c <= '9') || c == '.'; };
        const bool left = at == 0 || !digit(l[at - 1]);
        const size_t end = at + v.text.size();
        const bool right = end >= l.size() || !digit(l[end]) ||
                           (l[end] == '.' && (end + 1 >= l.size() || !digit(l[end + 1])));
        found = left && right;
      }
    }
    if (!found)
      problems.push_back(where + v.text + " is not on " +
                         (prefix.empty() ? "any line" : "line " + prefix.substr(0, prefix.size() - 2)) +
                         " of excerpt " + v.excerpt);
  }
  return problems;
}

}  // namespace gp::accept
