// The rules an archive entry must pass before it is extracted into a prefix (pure, table-tested):
// NVIDIA's archives hold one top directory ("cudnn-linux-x86_64-9.12.0.46_cuda12-archive/") with include/,
// lib/ and the licence; that directory becomes the prefix. Refused: absolute paths, "..", anything outside
// the top directory, devices/FIFOs/sockets, symlinks whose target leaves the prefix, hard links to
// anything outside it.
#pragma once
#include <string>

#include "sys/archive.h"

namespace gp::redist {

// A relative path without "", "." or ".." components, NUL bytes, or a leading "/".
bool IsSafeRelativePath(const std::string& path);

// Lexically normalises a relative path ("a/./b//c/" -> "a/b/c"); nullopt-like "" result with ok=false when
// ".." climbs above the start.
bool Normalize(const std::string& path, std::string& out);

// The ArchivePlacer for an archive whose entries must all sit under `top_dir`: "" and `rel` (the path
// inside the prefix, "" for the top directory itself) or the reason for refusing the entry.
std::string PlaceEntry(const sys::ArchiveEntry& e, const std::string& top_dir, std::string& rel,
                       std::string& rel_link);

}  // namespace gp::redist
