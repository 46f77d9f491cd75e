#include "sys/tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gp::sys {
namespace {

WriteResult Fail(const std::string& what, const std::string& path, int err) {
  WriteResult r;
  r.ok = false;
  r.error = what + " " + path + ": " + ::strerror(err);
  return r;
}

std::string ParentOrDot(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The names in the directory open at `fd` ("." and ".." left out); false when it cannot be read.
bool Names(int fd, std::vector<std::string>& out) {
  out.clear();
  int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return false;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return false;
  }
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
    errno = 0;
  }
  const bool ok = errno == 0;
  ::closedir(d);
  return ok;
}

// One directory on the way down: its name in its parent, its identity (checked on the way back up) and the
// names still to remove in it.
struct Level {
  std::string name;
  dev_t dev = 0;
  ino_t ino = 0;
  std::vector<std::string> todo;
  size_t next = 0;
  bool kept = false;  // something in it could not be removed
};

// "a/b/name" below the walk's root, shortened in the middle: a failure deep in a hostile tree must not make
// a message of many kilobytes.
std::string Below(const std::vector<Level>& down, const std::string& name) {
  std::string out;
  for (size_t i = 1; i < down.size(); ++i) out += down[i].name + "/";
  out += name;
  if (out.size() > 240) out = out.substr(0, 100) + "..." + out.substr(out.size() - 100);
  return out;
}

// One RemoveTree walk: the directory open now, the levels down to it, and what could not be removed (how
// many, and the first with its reason).
class TreeRemoval {
 public:
  // Starts at the root directory open at `fd`, whose lstat is `st`.
  TreeRemoval(int fd, const struct stat& st) : fd_(fd), down_(1) {
    down_[0].dev = st.st_dev;
    down_[0].ino = st.st_ino;
    if (!Names(fd_, down_[0].todo)) Keep(".", errno);
  }

  // Removes everything below the root, closing the last descriptor; false with `moved` set when a directory
  // was moved while it was being removed (the walk stops there).
  bool Walk(const std::string& path, WriteResult& moved) {
    for (;;) {
      Level& here = down_.back();
      if (here.next < here.todo.size()) {
        const std::string name = here.todo[here.next++];  // a copy: going down adds a level
        RemoveEntry(name);
        continue;
      }
      if (down_.size() == 1) {
        ::close(fd_);
        return true;
      }
      if (!BackUp(path, moved)) return false;
    }
  }

  // The walk's result once the root itself is removed: what could not be removed, or the root's error.
  WriteResult Result(const std::string& path) const {
    if (down_[0].kept || ::rmdir(path.c_str()) != 0) {
      if (first_.empty()) return Fail("cannot remove", path, errno);
      WriteResult r;
      r.ok = false;
      r.error = "cannot remove " + path + ": " + std::to_string(left_) +
                (left_ == 1 ? " entry" : " entries") + " could not be removed; the first, " + first_;
      return r;
    }
    return {};
  }

 private:
  // Counts `name` as kept (in the directory open now), with the first such reason.
  void Keep(const std::string& name, int err) {
    ++left_;
    if (first_.empty()) first_ = Below(down_, name) + ": " + ::strerror(err);
    down_.back().kept = true;
  }

  // Removes `name` from the directory open now: a file or an empty directory at once, a directory with
  // entries by going down into it.
  void RemoveEntry(const std::string& name) {
    if (::unlinkat(fd_, name.c_str(), 0) == 0 || errno == ENOENT) return;
    const int err = errno;
    if (err != EISDIR && err != EPERM) {  // Linux says EISDIR for a directory, POSIX EPERM
      Keep(name, err);
      return;
    }
    if (::unlinkat(fd_, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return;  // an empty one
    if (errno != ENOTEMPTY && errno != EEXIST) {
      Keep(name, errno == ENOTDIR ? err : errno);  // a file that cannot go (EPERM: immutable)
      return;
    }
    GoDown(name);
  }

  // Opens directory `name` in the one open now and makes it the one open now, its names read.
  void GoDown(const std::string& name) {
    const int sub = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sst {};
    if (sub < 0 || ::fstat(sub, &sst) != 0) {
      Keep(name, errno);
      if (sub >= 0) ::close(sub);
      return;
    }
    ::close(fd_);
    fd_ = sub;
    Level next;
    next.name = name;
    next.dev = sst.st_dev;
    next.ino = sst.st_ino;
    down_.push_back(std::move(next));
    if (!Names(fd_, down_.back().todo)) Keep(".", errno);
  }

  // The directory open now is empty (unless something in it stayed): back up to its parent through "..",
  // checked against the parent recorded on the way down, and remove it there. False with `moved` set when
  // the parent is not the one recorded.
  bool BackUp(const std::string& path, WriteResult& moved) {
    const int up = ::openat(fd_, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd_);
    const Level done = std::move(down_.back());
    down_.pop_back();
    struct stat ust {};
    if (up < 0 || ::fstat(up, &ust) != 0 || ust.st_dev != down_.back().dev ||
        ust.st_ino != down_.back().ino) {
      if (up >= 0) ::close(up);
      moved = {
          false,
          "cannot remove " + path + ": " + Below(down_, done.name) + " was moved while it was being removed",
          ""};
      return false;
    }
    fd_ = up;
    if (done.kept)
      down_.back().kept = true;
    else if (::unlinkat(fd_, done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      Keep(done.name, errno);
    return true;
  }

  int fd_;
  std::vector<Level> down_;
  std::string first_;
  uint64_t left_ = 0;
};

}  // namespace

WriteResult RemoveTree(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? WriteResult{} : Fail("cannot remove", path, errno);
  if (!S_ISDIR(st.st_mode))
    return ::unlink(path.c_str()) == 0 ? WriteResult{} : Fail("cannot remove", path, errno);
  // Depth first with one directory descriptor open at a time and every name relative to it (openat,
  // unlinkat), so neither the tree's depth nor PATH_MAX limits the walk; each directory's names are read
  // once, before its entries go. The way back up is "..", checked against the directory recorded on the way
  // down (device and inode), so a directory moved meanwhile stops the walk instead of leading elsewhere.
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail("cannot remove", path, errno);
  TreeRemoval walk(fd, st);
  if (WriteResult moved; !walk.Walk(path, moved)) return moved;
  return walk.Result(path);
}

WriteResult SwitchSymlink(const std::string& link, const std::string& target) {
  const std::string tmp = link + ".gpuprep-new";
  ::unlink(tmp.c_str());
  if (::symlink(target.c_str(), tmp.c_str()) != 0) return Fail("cannot create", tmp, errno);
  if (::rename(tmp.c_str(), link.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Fail("cannot switch", link, err);
  }
  SyncDir(ParentOrDot(link));
  return {};
}

void RemoveIfEmpty(const std::string& path) { ::rmdir(path.c_str()); }

WriteResult RenameDir(const std::string& from, const std::string& to) {
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) return Fail("cannot rename into", to, EEXIST);
  if (::rename(from.c_str(), to.c_str()) != 0) return Fail("cannot rename " + from + " to", to, errno);
  SyncDir(ParentOrDot(to));
  return {};
}

WriteResult ExchangeDirs(const std::string& a, const std::string& b, bool& unsupported) {
  unsupported = false;
  if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) {
    unsupported = errno == EINVAL || errno == ENOSYS;
    return Fail("cannot exchange " + a + " with", b, errno);
  }
  SyncDir(ParentOrDot(b));
  return {};
}

std::optional<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

std::string MakeTempDir(const std::string& parent, const std::string& prefix, std::string& error,
                        unsigned mode) {
  std::string tmpl = parent + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = "cannot create a directory in " + parent + ": " + ::strerror(errno);
    return "";
  }
  ::chmod(buf.data(), mode);
  return buf.data();
}

WriteResult SetDirMode(const std::string& path, unsigned mode) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail("cannot open", path, errno);
  const bool ok = ::fchmod(fd, mode) == 0;
  const int err = errno;
  ::close(fd);
  return ok ? WriteResult{} : Fail("cannot change the mode of", path, err);
}

}  // namespace gp::sys
