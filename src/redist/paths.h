// The rules an archive entry must pass before it is extracted into a prefix (pure, table-tested):
// NVIDIA's archives hold one top directory ("cudnn-linux-x86_64-9.12.0.46_cuda12-archive/") with include/,
// lib/ and the licence; that directory becomes the prefix. Refused: absolute paths, "..", anything outside
// the top directory, devices/FIFOs/sockets, symlinks whose target leaves the prefix, hard links to
// anything outside it or to anything but a regular file an earlier entry put there, names and link targets
// longer than kMaxEntryPath.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>

#include "sys/archive.h"

namespace gp::redist {

// A relative path without "", "." or ".." components, NUL bytes, or a leading "/".
bool IsSafeRelativePath(const std::string& path);

// Lexically normalises a relative path ("a/./b//c/" -> "a/b/c"); nullopt-like "" result with ok=false when
// ".." climbs above the start.
bool Normalize(const std::string& path, std::string& out);

// Longest entry name or link target accepted, in bytes (NVIDIA's longest are under 200: CCCL's headers). It
// keeps every path the extraction hands the kernel, the staging directory's included, well under PATH_MAX.
inline constexpr size_t kMaxEntryPath = 1024;

// The rules for one entry alone, for an archive whose entries must all sit under `top_dir`: "" and `rel` (the
// path inside the prefix, "" for the top directory itself; for a hard link `rel_link`, what it links to) or
// the reason for refusing the entry.
std::string PlaceEntry(const sys::ArchiveEntry& e, const std::string& top_dir, std::string& rel,
                       std::string& rel_link);

// The ArchivePlacer of one archive: PlaceEntry, and the rule that needs the entries before it: a hard link
// must name a regular file that an earlier entry of the same archive left at that path. A hard link to a
// symbolic link would be a second symbolic link elsewhere, whose leading ".." (checked from the first link's
// directory) climbs from another directory, out of the prefix.
class ArchivePlacement {
 public:
  explicit ArchivePlacement(std::string top_dir) : top_(std::move(top_dir)) {}
  std::string Place(const sys::ArchiveEntry& e, std::string& rel, std::string& rel_link);

 private:
  std::string top_;
  std::unordered_map<std::string, sys::ArchiveEntry::Type> placed_;  // rel -> what the last entry there was
};

}  // namespace gp::redist
