// Private to src/manifest/: builds a Stack from a parsed (and `extends:`-merged) document tree.
#pragma once
#include <string>
#include <vector>

#include "manifest/model.h"
#include "manifest/tree.h"

namespace gp::manifest {

// Validates every key and value; origins record the file:line:col of each field. Throws gp::FileError.
Stack StackFromTree(const Node& root);

// A list of apt packages ({name, version | upstream}): each name a Debian package name, each version a Debian
// version (they reach apt-get and apt-mark argv). `path` is the list's dotted name in errors.
std::vector<AptPackage> ParsePackages(const Node& list, const std::string& path);

// The optional `docker:` section (manifest/docker_spec.cc); checks it against the stack's toolkit.
void ParseDocker(const Node& n, Stack& s);

}  // namespace gp::manifest
