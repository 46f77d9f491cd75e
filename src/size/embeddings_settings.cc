// ApplyEmbeddingTables (embeddings.h): the tables one by one, each ROWSxDIM or ROWSxDIMxBYTES, validated
// where they enter; an error names the table by its place in the list and quotes it.
#include "size/embeddings.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {

void ApplyEmbeddingTables(Task& t, const Setting& s) {
  t.embedding_given.clear();
  const std::vector<std::string> items = Split(s.value, ',');
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item(Trim(items[i]));
    const std::string which = "table " + std::to_string(i + 1) + " " + QuoteToken(item) + ": ";
    const std::vector<std::string> f = Split(item, 'x');
    if (f.size() != 2 && f.size() != 3)
      s.origin.Fail(which + "expected ROWSxDIM or ROWSxDIMxBYTES, such as 45833188x128 or 1e6x64x2");
    Task::EmbeddingTable tab;
    if (!ParseCount(f[0], &tab.rows))
      s.origin.Fail(which + "rows must be a count from 1 to 1e14, such as 1e9 or 50M");
    const auto dim = ParseUnsigned(f[1]);
    if (!dim || f[1].size() > 6 || *dim < 1 || *dim > 65536)
      s.origin.Fail(which + "the dimension must be a whole number from 1 to 65536");
    tab.dim = static_cast<int>(*dim);
    if (f.size() == 3) {
      if (f[2] != "2" && f[2] != "4") s.origin.Fail(which + "bytes per value must be 2 or 4");
      tab.bytes = f[2][0] - '0';
    }
    t.embedding_given.push_back(tab);
  }
  if (t.embedding_given.empty()) s.origin.Fail("name at least one table, ROWSxDIM");
}

}  // namespace gp::size
