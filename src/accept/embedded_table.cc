// The embedded expectation table, parsed on first use (kept apart from table.cc, which the build-time
// check links without the embedded files).
#include "accept/table.h"
#include "util/embedded.h"
#include "util/error.h"

namespace gp::accept {

const Table& EmbeddedTable() {
  static const Table table = [] {
    const EmbeddedFile* f = FindEmbedded(kTablePath);
    if (!f) throw Error(kExitFailed, std::string(kTablePath) + " is not embedded in this build");
    return LoadTable(std::string_view(f->data, f->size), kTablePath);
  }();
  return table;
}

}  // namespace gp::accept
