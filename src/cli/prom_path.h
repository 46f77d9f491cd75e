// --prometheus FILE (watch, doctor --health): the node_exporter textfile a verb writes, checked before
// anything is probed or sampled.
#pragma once
#include <string>

#include "cli/context.h"

namespace gp::cli {

// `flag` as an absolute path: a .prom name (the textfile collector reads no other) in an existing directory,
// and nothing WriteOutput would refuse (a directory, a socket, a block device); FlagError (exit 2) otherwise.
// "" for "".
std::string PromPath(Context& ctx, const std::string& flag);

}  // namespace gp::cli
