// Directory-tree operations for installs that are whole prefixes (redist/): the paths are paths on this
// machine (Fs::HostPath of a host path), so tests run them under a temp dir.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "sys/fs.h"

namespace gp::sys {

// Like rm -rf: removes `path` and everything below it without following symlinks; ok when absent. Any depth:
// the walk is relative to one open directory at a time (openat/unlinkat), so paths longer than PATH_MAX go
// too. What cannot be removed is skipped and the rest removed; ok==false then says how many entries stayed
// and why the first did (a directory moved during the walk stops it there).
WriteResult RemoveTree(const std::string& path);

// Makes `link` a symlink to `target` atomically: a new link beside it (LINK.gpuprep-new), renamed over
// `link`, directory fsynced. A reader sees the old target or the new one, never neither.
WriteResult SwitchSymlink(const std::string& link, const std::string& target);

// rmdir(2): removes `path` only when it is an empty directory; ok otherwise too (nothing to take back).
void RemoveIfEmpty(const std::string& path);

// rename(2) of a directory into place; fails when `to` exists (never merges into an older tree).
WriteResult RenameDir(const std::string& from, const std::string& to);

// Swaps two existing paths in one step (renameat2 RENAME_EXCHANGE): whoever looks up `a` or `b` finds one
// tree or the other, never nothing. `unsupported` is set when the filesystem cannot (EINVAL, ENOSYS).
WriteResult ExchangeDirs(const std::string& a, const std::string& b, bool& unsupported);

// The bytes free for unprivileged writers on the filesystem holding `path` (statvfs f_bavail x f_frsize:
// root's reserved blocks are left out); nullopt when it cannot be asked.
std::optional<uint64_t> FreeBytes(const std::string& path);

// A fresh, empty directory with a unique name under `parent` ("PARENT/PREFIX.XXXXXX"), mode `mode` (0700:
// only root sees inside); "" when it cannot be made (`error` then says why).
std::string MakeTempDir(const std::string& parent, const std::string& prefix, std::string& error,
                        unsigned mode = 0755);

// chmod(2) of a directory (not followed if a link: refused).
WriteResult SetDirMode(const std::string& path, unsigned mode);

}  // namespace gp::sys
