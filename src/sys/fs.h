// The filesystem seam. Every path gpuprep reads or writes on the probed system goes through Fs, written
// as the host sees it ("/etc/os-release"); DiskFs maps it under a root (--root DIR, or a fixture tree).
// Tests use DiskFs over fixture trees for reading and over a temp dir (TempRoot, tests/apply) for writes.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::sys {

struct SpaceInfo {
  uint64_t total_bytes = 0;
  uint64_t avail_bytes = 0;
};

// What a path a user names for output is (fleet-report -o, watch --prometheus), and so how
// Fs::WriteOutput writes it.
enum class OutputKind {
  kFile,        // a regular file, or nothing yet: replaced atomically (WriteAtomic, no backup)
  kNode,        // a FIFO or a character device: opened and written where it is; no rename, no backup
  kDescriptor,  // a process's open descriptor, through any links (/proc/self/fd/N, /dev/stdout, /dev/fd/N):
                // opened and written where it is; a regular file behind it is appended to (as ">>" would)
  kRefused,     // a directory, a socket, a block device, or a descriptor that is not open: `why` says which
};
struct OutputTarget {
  OutputKind kind = OutputKind::kFile;
  std::string why;  // kRefused only: one line, "PATH is a directory; name a regular file ..."
};

// The outcome of a write. ok==false carries a one-line reason (errno text and the path).
struct WriteResult {
  bool ok = true;
  std::string error;
  std::string backup_path;  // where the replaced file was kept ("" when there was none)
};

class Fs {
 public:
  virtual ~Fs() = default;

  // Whole contents of a regular file (following symlinks); nullopt when missing, unreadable, not a
  // regular file (a FIFO, a device) or larger than kMaxRead.
  virtual std::optional<std::string> Read(const std::string& path) const = 0;
  // First `max_bytes` of a file; for /proc and /sys files and for headers where only the top matters.
  virtual std::optional<std::string> ReadPrefix(const std::string& path, size_t max_bytes) const = 0;
  // The whole contents of a regular file handed to `piece` in order, a piece at a time, so that a large
  // file (the dpkg database's megabytes) is never held whole; false where Read gives nullopt, and then the
  // pieces already handed over are to be discarded. By default Read's text is the one piece.
  virtual bool ReadPieces(const std::string& path, const std::function<void(std::string_view)>& piece) const {
    auto text = Read(path);
    if (text) piece(*text);
    return text.has_value();
  }
  virtual bool Exists(const std::string& path) const = 0;  // follows symlinks
  virtual bool IsDir(const std::string& path) const = 0;
  // Entry names in a directory (no "." or ".."), sorted; empty when missing.
  virtual std::vector<std::string> List(const std::string& dir) const = 0;
  // Target of a symlink as stored; nullopt when not a symlink.
  virtual std::optional<std::string> ReadLink(const std::string& path) const = 0;
  // Filesystem size of the mount holding `path`; nullopt when it cannot be known (a non-live root).
  virtual std::optional<SpaceInfo> Space(const std::string& path) const = 0;

  // Atomic replace: writes a fresh PATH.gpuprep-new.<random> (O_EXCL|O_NOFOLLOW: never through a planted
  // link or file), fsyncs, keeps the old file as PATH.gpuprep-bak (when `keep_backup` and it existed; never
  // over an earlier backup: the next free .gpuprep-bak.1, .2, ..., none if one already holds the same bytes),
  // renames over PATH, fsyncs the directory. Creates parents. With `keep_backup` (a system file gpuprep
  // edits but does not own) PATH is first resolved by ResolveWriteTarget: a symbolic link under /etc is
  // written through (its target replaced, the backup beside the target, the link kept), and one leading
  // out of /etc is refused. Without it (gpuprep's own files) PATH itself is replaced, as rename(2) does.
  virtual WriteResult WriteAtomic(const std::string& path, const std::string& contents, unsigned mode = 0644,
                                  bool keep_backup = true) = 0;
  // What `path` is as an output a user named (OutputKind); follows links. Asked before a long run, so a path
  // that would be refused is refused before anything else happens.
  virtual OutputTarget OutputTargetOf(const std::string& path) const = 0;
  // The one writer of a path a user names for output: as OutputTargetOf says, a regular file or nothing is
  // replaced atomically with `mode`, a FIFO, a character device or a descriptor is opened and written where
  // it is and stays what it was, and anything else is refused (ok false, `error` the one line). Opening a
  // FIFO waits for a reader when `wait_for_reader` (as a shell's ">" does); otherwise a FIFO nobody reads
  // is an error and nothing waits. A reader that leaves mid-write is an error, not SIGPIPE.
  virtual WriteResult WriteOutput(const std::string& path, const std::string& contents, unsigned mode,
                                  bool wait_for_reader) = 0;
  // Moves a file aside (rename); used to retire conflicting apt lists with a backup.
  virtual WriteResult Rename(const std::string& from, const std::string& to) = 0;
  virtual WriteResult Remove(const std::string& path) = 0;  // like rm -f: ok when already absent
  virtual WriteResult MakeDirs(const std::string& path, unsigned mode = 0755) = 0;

  // The path on this machine that `path` maps to (root + path). For messages and for handing files to
  // other programs.
  virtual std::string HostPath(const std::string& path) const = 0;
  // True when this Fs is the live system ("/"); false for --root trees. Probes that would load, run or
  // contact something of the live host check this first (docs/cli.md, "--root").
  virtual bool IsLive() const = 0;
};

// The file `path` (absolute) names once every symbolic link on the way is followed, the file's own or a
// directory's, a chain of them too, with ".." taken from where the link before it leads (what realpath(3)
// gives, but through `fs`: under --root, inside the tree). Components that do not exist are kept as written.
// With `stop_at`, the walk ends at the first resolved prefix for which it is true, before that prefix's own
// link is followed: `path` is that prefix and `stopped` is set.
struct ResolvedPath {
  std::string path;           // absolute and normalised ("/" for the root); `path` itself on a loop
  bool through_link = false;  // a symbolic link was followed
  bool through_dir = false;   // ... one of them a directory's
  bool stopped = false;       // `stop_at` ended the walk at `path`
  std::string error;          // a loop: "PATH: too many levels of symbolic links" (more than 40 links)
};
ResolvedPath ResolvePath(const Fs& fs, const std::string& path,
                         bool (*stop_at)(const std::string& prefix) = nullptr);

// Where a write of a system file gpuprep edits lands (WriteAtomic with keep_backup, and `plan --format sh`
// alike). Under /etc every symbolic link on the way is followed, the file's own or a directory's, a chain of
// them too (configuration management links such files): `path` becomes the file it finally names and `link`
// the path as given; that file must itself be under /etc, else `error` says why (one line, for exit 2), as it
// does for a loop. Elsewhere `path` as given.
struct WriteTarget {
  std::string path;   // the file that is replaced
  std::string link;   // the link written through ("" when `path` is no link)
  std::string error;  // "" when the write may go ahead
};
WriteTarget ResolveWriteTarget(const Fs& fs, const std::string& path);

// Largest file Read() returns (manifests, snapshots, the dpkg status file are far below it).
inline constexpr size_t kMaxRead = 64u << 20;

// Real filesystem under `root` ("/" for the live host). Under a root, paths resolve the way the probed
// host would see them: symlinks are followed inside the tree (an absolute target such as
// /usr/local/cuda -> /usr/local/cuda-13.0 is re-rooted), and ".." never climbs above the root, so a
// --root probe never reads the live host through a link. On the live host a relative path is relative to
// the working directory.
class DiskFs : public Fs {
 public:
  explicit DiskFs(std::string root);
  std::optional<std::string> Read(const std::string& path) const override;
  std::optional<std::string> ReadPrefix(const std::string& path, size_t max_bytes) const override;
  bool ReadPieces(const std::string& path, const std::function<void(std::string_view)>& piece) const override;
  bool Exists(const std::string& path) const override;
  bool IsDir(const std::string& path) const override;
  std::vector<std::string> List(const std::string& dir) const override;
  std::optional<std::string> ReadLink(const std::string& path) const override;
  std::optional<SpaceInfo> Space(const std::string& path) const override;
  WriteResult WriteAtomic(const std::string& path, const std::string& contents, unsigned mode,
                          bool keep_backup) override;
  OutputTarget OutputTargetOf(const std::string& path) const override;
  WriteResult WriteOutput(const std::string& path, const std::string& contents, unsigned mode,
                          bool wait_for_reader) override;
  WriteResult Rename(const std::string& from, const std::string& to) override;
  WriteResult Remove(const std::string& path) override;
  WriteResult MakeDirs(const std::string& path, unsigned mode) override;
  std::string HostPath(const std::string& path) const override;
  bool IsLive() const override { return live_; }

 private:
  // The path on this machine for `path`: resolved inside the root (see the class comment); the last
  // component is followed only when `follow_last` (writes replace a link itself, as rename(2) does).
  // "" (which every system call rejects) for a symlink loop.
  std::string Real(const std::string& path, bool follow_last = true) const;

  std::string root_;  // without trailing slash; "" for "/"
  bool live_;
};

}  // namespace gp::sys
