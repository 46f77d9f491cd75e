// --prometheus FILE's checks (prom_path.h).
#include "cli/prom_path.h"

#include "sys/fs.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {

std::string PromPath(Context& ctx, const std::string& flag) {
  if (flag.empty()) return "";
  std::string abs = sys::AbsoluteFromCwd(flag);
  const std::string base = abs.substr(abs.rfind('/') + 1);
  if (base.size() <= 5 || base.compare(base.size() - 5, 5, ".prom") != 0)
    throw FlagError("--prometheus", "\"" + TerminalSafe(flag) +
                                        "\": node_exporter's textfile collector reads only *.prom files");
  const std::string dir = abs.substr(0, abs.rfind('/'));
  if (!ctx.local_fs || !ctx.local_fs->IsDir(dir.empty() ? "/" : dir))
    throw FlagError("--prometheus", "\"" + TerminalSafe(flag) + "\": its directory does not exist");
  if (sys::OutputTarget t = ctx.local_fs->OutputTargetOf(abs); t.kind == sys::OutputKind::kRefused)
    throw FlagError("--prometheus", TerminalSafe(t.why));
  return abs;
}

}  // namespace gp::cli
