// A scratch file for a storage measurement (accept --storage): created in a directory the user named,
// opened with O_DIRECT where the filesystem allows it (buffers, offsets and lengths aligned to kDirectAlign),
// else opened normally, so the reader makes the data leave the page cache itself (fsync, then
// posix_fadvise(POSIX_FADV_DONTNEED)). The file is unlinked when the object is destroyed (every exit path
// that unwinds; Ctrl-C and SIGTERM are turned into a stop by StopSignal, which unwinds).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gp::sys {

// O_DIRECT's alignment for every buffer, offset and length (the largest logical block size in use).
inline constexpr size_t kDirectAlign = 4096;

// What a directory the user named is, and the bytes an unprivileged writer may still use in it (statvfs's
// f_bavail x f_frsize; absent when the filesystem reports no size at all, as ramfs does).
struct DirSpace {
  enum Kind { kDirectory, kMissing, kNotDirectory, kUnreadable } kind = kMissing;
  std::optional<uint64_t> available;
  std::string error;  // strerror for kUnreadable
};
DirSpace DirSpaceOf(const std::string& dir);

// A buffer aligned to kDirectAlign (freed by the deleter).
struct AlignedFree {
  void operator()(char* p) const;
};
using AlignedBuffer = std::unique_ptr<char[], AlignedFree>;
AlignedBuffer AlignedAlloc(size_t bytes);  // bytes: a multiple of kDirectAlign; nullptr when out of memory

class ScratchFile {
 public:
  // Creates a new file (O_EXCL, mode 0600) named `name` in `dir`; O_DIRECT first, and without it when the
  // open or the first write says EINVAL. nullptr and `error` when it cannot be created.
  static std::unique_ptr<ScratchFile> Create(const std::string& dir, const std::string& name,
                                             std::string* error);
  ~ScratchFile();  // closes and unlinks
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  bool direct() const { return direct_; }
  const std::string& path() const { return path_; }
  // Writes all `n` bytes at the end (n and p aligned when direct). False with `error` on failure.
  bool Append(const char* p, size_t n, std::string* error);
  bool Sync(std::string* error);       // fdatasync
  bool DropCache(std::string* error);  // posix_fadvise(POSIX_FADV_DONTNEED) over the whole file
  // Reads exactly `n` bytes at `offset` (aligned when direct). False with `error` on failure or a short file.
  bool ReadAt(char* p, size_t n, uint64_t offset, std::string* error);

 private:
  ScratchFile(int fd, std::string path, bool direct) : fd_(fd), path_(std::move(path)), direct_(direct) {}
  bool Reopen(std::string* error);  // the same file without O_DIRECT (a write said EINVAL)
  int fd_ = -1;
  std::string path_;
  bool direct_ = false;
  uint64_t written_ = 0;
};

}  // namespace gp::sys
