// compat.yaml library_builds: the GPU code each pinned library build carries (private to src/manifest/).
#pragma once
#include "manifest/model.h"
#include "manifest/tree.h"

namespace gp::manifest {

// `library_builds: [{library: nccl, version: "2.30.7", cuda: "12.9", sass: ["6.0"], ptx: ["12.0"], source:
// ...}]`.
void ParseLibraryBuilds(const Node& list, Compat& out);

}  // namespace gp::manifest
