// LineDiff (declared in daemon_json.h): a patience diff, one level deep, in O(n log n) time and O(n) memory.
// The common first and last lines are kept; between them the lines that occur exactly once in each text are
// matched (their longest run in the same order, by patience sorting); between two matched lines what remains
// is trimmed of common first and last lines again and shown as removed, then added. Not always the shortest
// diff (a full LCS is O(n·m) and took gigabytes on large files), but every line of both texts appears once,
// in order.
#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "docker/daemon_json.h"

namespace gp::docker {
namespace {

using Lines = std::vector<std::string_view>;

Lines Split(const std::string& text) {
  Lines out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.emplace_back(text.data() + start, nl - start);
    start = nl + 1;
  }
  return out;
}

void Put(std::string& out, const char* mark, std::string_view line) {
  out += mark;
  out.append(line);
  out += '\n';
}

// a[i0, i1) against b[j0, j1): common head and tail kept, the rest removed then added.
void Block(const Lines& a, size_t i0, size_t i1, const Lines& b, size_t j0, size_t j1, std::string& out) {
  while (i0 < i1 && j0 < j1 && a[i0] == b[j0]) {
    Put(out, "  ", a[i0++]);
    ++j0;
  }
  size_t tail = 0;
  while (i1 - tail > i0 && j1 - tail > j0 && a[i1 - tail - 1] == b[j1 - tail - 1]) ++tail;
  for (size_t i = i0; i < i1 - tail; ++i) Put(out, "- ", a[i]);
  for (size_t j = j0; j < j1 - tail; ++j) Put(out, "+ ", b[j]);
  for (size_t i = i1 - tail; i < i1; ++i) Put(out, "  ", a[i]);
}

}  // namespace

std::string LineDiff(const std::string& before, const std::string& after) {
  const Lines a = Split(before), b = Split(after);
  // Lines unique in both texts: where they stand in each.
  struct Seen {
    size_t in_a = 0, in_b = 0, at_a = 0, at_b = 0;
  };
  std::unordered_map<std::string_view, Seen> seen;
  seen.reserve(a.size() + b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    Seen& s = seen[a[i]];
    ++s.in_a;
    s.at_a = i;
  }
  for (size_t j = 0; j < b.size(); ++j) {
    Seen& s = seen[b[j]];
    ++s.in_b;
    s.at_b = j;
  }
  std::vector<std::pair<size_t, size_t>> pairs;  // (i, j), in a's order
  for (size_t i = 0; i < a.size(); ++i) {
    const Seen& s = seen[a[i]];
    if (s.in_a == 1 && s.in_b == 1) pairs.emplace_back(i, s.at_b);
  }
  // Longest increasing run of j (patience sorting): tails[k] = index in `pairs` ending a run of k + 1.
  std::vector<size_t> tails, prev(pairs.size(), SIZE_MAX);
  for (size_t p = 0; p < pairs.size(); ++p) {
    auto pos = std::lower_bound(tails.begin(), tails.end(), pairs[p].second,
                                [&](size_t t, size_t j) { return pairs[t].second < j; });
    if (pos != tails.begin()) prev[p] = *(pos - 1);
    if (pos == tails.end()) {
      tails.push_back(p);
    } else {
      *pos = p;
    }
  }
  std::vector<std::pair<size_t, size_t>> anchors;
  for (size_t p = tails.empty() ? SIZE_MAX : tails.back(); p != SIZE_MAX; p = prev[p])
    anchors.push_back(pairs[p]);
  std::reverse(anchors.begin(), anchors.end());

  std::string out;
  out.reserve(before.size() + after.size() + 2 * (a.size() + b.size()));
  size_t i = 0, j = 0;
  for (const auto& [ai, bj] : anchors) {
    Block(a, i, ai, b, j, bj, out);
    Put(out, "  ", a[ai]);
    i = ai + 1;
    j = bj + 1;
  }
  Block(a, i, a.size(), b, j, b.size(), out);
  return out;
}

}  // namespace gp::docker
