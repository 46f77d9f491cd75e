// The archive seam: tar archives (xz, gzip or uncompressed) read as a stream and extracted under a
// directory. libarchive is loaded with dlopen("libarchive.so.13") on first use, like libcurl and libcrypto,
// so commands that never extract (doctor) never map it. Which entries are acceptable, and where each goes,
// is the caller's decision (redist/paths.h); this file only carries it out, with libarchive's own
// "no '..', never through a symlink" guards on as a second line.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gp::sys {

struct ArchiveEntry {
  enum class Type { kFile, kDir, kSymlink, kHardlink, kOther };  // kOther: devices, FIFOs, sockets
  std::string path;                                              // as stored in the archive
  Type type = Type::kFile;
  std::string link;  // kSymlink: the target as stored; kHardlink: the archive path it links to
  uint64_t size = 0;
  unsigned mode = 0;  // permission bits
};

// Supplies the archive's bytes: points *data at the next piece and returns its length, 0 at the end, -1 when
// the input failed (the archive is then abandoned).
using ArchiveInput = std::function<long(const void** data)>;

// Where an entry goes: "" to extract it at `rel` (and, for a hard link, to link it to `rel_link`), both
// relative to the destination; or a one-line reason to refuse it, which stops the whole extraction.
using ArchivePlacer =
    std::function<std::string(const ArchiveEntry& e, std::string& rel, std::string& rel_link)>;

// Bounds on one extraction, checked before anything is written: an entry whose declared size would take the
// file data past `max_bytes`, a data block that would (a size that lied), or an entry past `max_entries`
// stops the extraction there, so at most `max_bytes` of file data and `max_entries` entries reach the disk.
struct ExtractLimits {
  uint64_t max_bytes = UINT64_MAX;    // file data, every file of the archive together
  uint64_t max_entries = UINT64_MAX;  // entries of any kind
};

struct ExtractResult {
  enum class Over { kNone, kBytes, kEntries };
  std::string error;        // "" when every entry was extracted
  Over over = Over::kNone;  // which limit stopped it (error then says so too)
  uint64_t entries = 0;
  uint64_t bytes = 0;  // file data written
  bool ok() const { return error.empty(); }
};

// Told about a regular file being written (its path on this machine): every `kWrittenStep` bytes of its data
// and once when it is complete; for early writeback (sys/writeback.h). Runs on the extracting thread.
using ArchiveWritten = std::function<void(const std::string& path)>;
inline constexpr uint64_t kWrittenStep = 32u << 20;

// Extracts the tar stream from `input` under the existing directory `dest` (a path on this machine; it is
// resolved with realpath first), within `limits`. Ownership is not restored. Modes are set, not taken from
// the archive or the umask: InstalledMode for each entry, 0755 for a directory the archive does not list
// (the process umask is 022 while it runs, the caller's again after).
// Refused here whatever the placer said: a hard link to anything but a regular file already extracted, sparse
// files (holes), a target path of PATH_MAX bytes or more. The mode an extracted entry gets, whatever the
// archive says and whatever the umask: 0755 for a directory and for a file with any execute bit, 0644 for any
// other file (never group- or world-writable; no set-user-ID, set-group-ID or sticky bit).
unsigned InstalledMode(const ArchiveEntry& e);

ExtractResult ExtractTar(const ArchiveInput& input, const std::string& dest, const ArchivePlacer& place,
                         const ArchiveWritten& written = {}, const ExtractLimits& limits = {});

// A gzip file's content (a rotated log: history.log.2.gz), decompressed through the same libarchive seam.
struct Gunzipped {
  bool ok = false;
  std::string data;        // the decompressed bytes; with `truncated`, the last `max_bytes` from a line start
  bool truncated = false;  // more than `max_bytes` decompressed: the oldest part was dropped
  std::string error;       // one line when !ok: "not gzip data: ...", "corrupt gzip data: ..."
};

// Decompresses `gz` (the whole file, read by the caller within its own bound), keeping its last `max_bytes`;
// the memory held stays under 2 * max_bytes plus one read, whatever the ratio of the compression.
Gunzipped Gunzip(std::string_view gz, size_t max_bytes);

}  // namespace gp::sys
