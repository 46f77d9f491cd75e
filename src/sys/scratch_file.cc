#include "sys/scratch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gp::sys {
namespace {

std::string ScratchErr(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

DirSpace DirSpaceOf(const std::string& dir) {
  DirSpace d;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    d.kind = errno == ENOENT || errno == ENOTDIR ? DirSpace::kMissing : DirSpace::kUnreadable;
    d.error = std::strerror(errno);
    return d;
  }
  if (!S_ISDIR(st.st_mode)) {
    d.kind = DirSpace::kNotDirectory;
    return d;
  }
  struct statvfs v {};
  if (::statvfs(dir.c_str(), &v) != 0) {
    d.kind = DirSpace::kUnreadable;
    d.error = std::strerror(errno);
    return d;
  }
  d.kind = DirSpace::kDirectory;
  if (v.f_blocks > 0) d.available = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  return d;
}

void AlignedFree::operator()(char* p) const { std::free(p); }

AlignedBuffer AlignedAlloc(size_t bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, kDirectAlign, bytes) != 0) return AlignedBuffer(nullptr);
  return AlignedBuffer(static_cast<char*>(p));
}

std::unique_ptr<ScratchFile> ScratchFile::Create(const std::string& dir, const std::string& name,
                                                 std::string* error) {
  const std::string path = dir + (dir.empty() || dir.back() != '/' ? "/" : "") + name;
  const int flags = O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::open(path.c_str(), flags | O_DIRECT, 0600);
  bool direct = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    if (error) *error = ScratchErr("cannot create " + path);
    return nullptr;
  }
  return std::unique_ptr<ScratchFile>(new ScratchFile(fd, path, direct));
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

bool ScratchFile::Reopen(std::string* error) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (error) *error = ScratchErr("cannot reopen " + path_);
    return false;
  }
  ::close(fd_);
  fd_ = fd;
  direct_ = false;
  return true;
}

bool ScratchFile::Append(const char* p, size_t n, std::string* error) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::pwrite(fd_, p + done, n - done, static_cast<off_t>(written_ + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL && direct_ && written_ == 0 && done == 0) {
      if (!Reopen(error)) return false;  // the filesystem took O_DIRECT at open but not at write
      continue;
    }
    if (w <= 0) {
      if (error) *error = w == 0 ? "write to " + path_ + " made no progress" : ScratchErr("write " + path_);
      return false;
    }
    done += static_cast<size_t>(w);
  }
  written_ += n;
  return true;
}

bool ScratchFile::Sync(std::string* error) {
  if (::fdatasync(fd_) == 0) return true;
  if (error) *error = ScratchErr("fdatasync " + path_);
  return false;
}

bool ScratchFile::DropCache(std::string* error) {
  const int rc = ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (rc == 0) return true;
  errno = rc;
  if (error) *error = ScratchErr("posix_fadvise " + path_);
  return false;
}

bool ScratchFile::ReadAt(char* p, size_t n, uint64_t offset, std::string* error) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (error) *error = r == 0 ? path_ + " ended early" : ScratchErr("read " + path_);
      return false;
    }
    done += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace gp::sys
