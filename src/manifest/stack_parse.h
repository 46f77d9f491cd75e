// Private to src/manifest/: builds a Stack from a parsed (and `extends:`-merged) document tree.
#pragma once
#include "manifest/model.h"
#include "manifest/tree.h"

namespace gp::manifest {

// Validates every key and value; origins record the file:line:col of each field. Throws gp::FileError.
Stack StackFromTree(const Node& root);

// The optional `docker:` section (manifest/docker_spec.cc); checks it against the stack's toolkit.
void ParseDocker(const Node& n, Stack& s);

}  // namespace gp::manifest
