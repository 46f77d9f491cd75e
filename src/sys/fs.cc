#include "sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sys/fs_errors.h"
#include "util/strings.h"

namespace gp::sys {
namespace {

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string RootedParent(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

void FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// The components of an absolute or relative path, in order ("" and "." dropped; ".." kept).
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string c = path.substr(start, slash - start);
    if (!c.empty() && c != ".") out.push_back(std::move(c));
    start = slash + 1;
  }
  return out;
}

bool UnderEtc(const std::string& path) { return path.compare(0, 5, "/etc/") == 0; }

// A new, empty temporary beside `host` ("HOST.gpuprep-new.<16 random hex digits>"), created with O_EXCL and
// O_NOFOLLOW: whatever waits at a name someone could guess (a planted symbolic link, a file) is never opened,
// so never written through or truncated. -1 with errno set when none can be made. O_EXCL is what makes it
// safe; the random name only keeps a planted file from making the write fail, so at first boot, before the
// kernel's random pool is ready (getrandom would block), the clock and the pid stand in.
int CreateTemp(const std::string& host, std::string& tmp) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    unsigned char r[8];
    if (::getrandom(r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
      struct timespec ts {};
      ::clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t v = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 30) ^
                   (static_cast<uint64_t>(::getpid()) << 48) ^ static_cast<uint64_t>(attempt);
      std::memcpy(r, &v, sizeof r);
    }
    static const char kHex[] = "0123456789abcdef";
    tmp = host + ".gpuprep-new.";
    for (unsigned char c : r) {
      tmp += kHex[c >> 4];
      tmp += kHex[c & 15];
    }
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Keeps the file at `host` (`target` as the caller names it) under a backup name before WriteAtomic
// replaces it; the result names the backup, or says why none could be kept (the temporary `tmp` then
// removed). A hard link keeps the old contents under the backup name while the rename replaces the
// original, so there is no moment without a file at `target`. Never overwrite an earlier backup (it may hold
// the file as it was before gpuprep): take the next free name; but a backup that already holds these bytes (a
// file rewritten with what it had before, like a library switch's loader entry) is enough.
WriteResult KeepBackupLink(const Fs& fs, const std::string& target, const std::string& host,
                           const std::string& tmp) {
  WriteResult result;
  const std::optional<std::string> old = fs.Read(target);
  for (int i = 0;; ++i) {
    const std::string suffix = i == 0 ? ".gpuprep-bak" : ".gpuprep-bak." + std::to_string(i);
    struct stat bst;
    if (::lstat((host + suffix).c_str(), &bst) == 0) {
      if (old && S_ISREG(bst.st_mode) && fs.Read(target + suffix) == old) {
        result.backup_path = target + suffix;
        return result;
      }
    } else if (::link(host.c_str(), (host + suffix).c_str()) == 0) {
      result.backup_path = target + suffix;
      return result;
    } else if (errno != EEXIST) {
      ::unlink(tmp.c_str());
      return {false, ErrnoText("cannot keep a backup of", host), ""};
    }
    if (i >= 999) {
      ::unlink(tmp.c_str());
      return {false, "cannot keep a backup of " + host + ": 1000 backups already", ""};
    }
  }
}

}  // namespace

ResolvedPath ResolvePath(const Fs& fs, const std::string& path, bool (*stop_at)(const std::string& prefix)) {
  ResolvedPath r;
  // Every component is followed, as the kernel would follow it: a linked directory (/etc/docker -> ...) leads
  // elsewhere as surely as a linked file. `done` is the resolved path so far ("" = "/"), `todo` what is left
  // (back() next).
  std::string done;
  std::vector<std::string> todo = Components(path);
  std::reverse(todo.begin(), todo.end());
  int links = 0;
  while (!todo.empty()) {
    const std::string c = todo.back();
    todo.pop_back();
    if (c == "..") {
      done = done.empty() ? "" : RootedParent(done);
      if (done == "/") done.clear();
      continue;
    }
    const std::string next = done + "/" + c;
    if (stop_at && stop_at(next)) {
      r.path = next;
      r.stopped = true;
      return r;
    }
    const auto target = fs.ReadLink(next);
    if (!target || target->empty()) {
      done = next;
      continue;
    }
    if (++links > 40)
      return {path, r.through_link, r.through_dir, false, path + ": too many levels of symbolic links"};
    r.through_link = true;
    r.through_dir = r.through_dir || !todo.empty();
    if ((*target)[0] == '/') done.clear();
    auto parts = Components(*target);
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  }
  r.path = done.empty() ? "/" : done;
  return r;
}

WriteTarget ResolveWriteTarget(const Fs& fs, const std::string& path) {
  WriteTarget t{path, "", ""};
  if (!UnderEtc(path)) return t;
  const ResolvedPath r = ResolvePath(fs, path);
  if (!r.error.empty()) return {path, path, r.error};
  if (r.path == path) return t;
  t.path = r.path;
  t.link = path;
  if (!UnderEtc(r.path))
    t.error =
        path + (r.through_dir ? " leads through a symbolic link to " : " is a symbolic link to ") + r.path +
        ", outside /etc: gpuprep edits a linked system file only when the link stays inside /etc (put the "
        "file itself at " +
        path + ", or link it to a file under /etc)";
  return t;
}

DiskFs::DiskFs(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
  live_ = root_.empty();
}

std::string DiskFs::Real(const std::string& path, bool follow_last) const {
  if (live_) return path;
  // Walk the path one component at a time under root_, expanding symlinks ourselves so that an absolute
  // target or a ".." is taken relative to the root, never to this machine's "/".
  std::vector<std::string> done;
  std::vector<std::string> todo;  // components still to walk, in reverse order (back() is next)
  auto push_parts = [&todo](const std::string& p) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= p.size()) {
      size_t slash = p.find('/', start);
      if (slash == std::string::npos) slash = p.size();
      if (slash > start) parts.push_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  auto joined = [this, &done] {
    std::string out = root_;
    for (const auto& c : done) out += "/" + c;
    return out;
  };
  push_parts(path);
  int links = 0;
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(c);
    if (todo.empty() && !follow_last) break;
    char buf[4096];
    const std::string here = joined();
    ssize_t n = ::readlink(here.c_str(), buf, sizeof buf - 1);
    if (n <= 0) continue;  // not a link
    // A link loop: "" names nothing, so every call on it fails with ENOENT; handing the kernel the link
    // itself would let it follow the link out of the root.
    if (++links > 40) return "";
    done.pop_back();
    std::string target(buf, static_cast<size_t>(n));
    if (target[0] == '/') done.clear();
    push_parts(target);
  }
  std::string out = joined();
  return out.empty() ? "/" : out;
}

std::string DiskFs::HostPath(const std::string& path) const { return Real(path); }

std::optional<std::string> DiskFs::Read(const std::string& path) const {
  auto text = ReadPrefix(path, kMaxRead + 1);
  if (text && text->size() > kMaxRead) return std::nullopt;
  return text;
}

namespace {
// A regular file opened for reading, with its size (/proc and /sys files say 0); -1 for anything else.
// O_NONBLOCK: opening a FIFO must not wait for a writer.
int OpenRegularFile(const std::string& real, off_t& size) {
  int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  size = st.st_size;
  return fd;
}
}  // namespace

bool DiskFs::ReadPieces(const std::string& path, const std::function<void(std::string_view)>& piece) const {
  off_t size = 0;
  const int fd = OpenRegularFile(Real(path), size);
  if (fd < 0) return false;
  struct CloseOnReturn {
    int fd;
    ~CloseOnReturn() { ::close(fd); }
  } closer{fd};  // `piece` may throw
  // One 64 KiB buffer, reused: the file's pages are never all in this process's memory at once.
  char buf[65536];
  size_t total = 0;
  bool ok = static_cast<size_t>(size) <= kMaxRead;
  while (ok) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    total += static_cast<size_t>(n);
    ok = total <= kMaxRead;
    if (ok) piece(std::string_view(buf, static_cast<size_t>(n)));
  }
  return ok;
}

std::optional<std::string> DiskFs::ReadPrefix(const std::string& path, size_t max_bytes) const {
  // Anything but a regular file is refused.
  off_t size = 0;
  const int fd = OpenRegularFile(Real(path), size);
  if (fd < 0) return std::nullopt;
  std::string out;
  // A regular file's size is known up front: reserve it once instead of growing the string. /proc and
  // /sys files report size 0 and simply grow. The chunk buffer stays small so no file-sized buffer is
  // zero-filled and copied.
  if (size > 0) out.reserve(std::min(static_cast<size_t>(size), max_bytes));
  char buf[65536];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;  // e.g. EISDIR, or a /proc file that refuses reads
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

bool DiskFs::Exists(const std::string& path) const {
  struct stat st;
  return ::stat(Real(path).c_str(), &st) == 0;
}

bool DiskFs::IsDir(const std::string& path) const {
  struct stat st;
  return ::stat(Real(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> DiskFs::List(const std::string& dir) const {
  std::vector<std::string> out;
  DIR* d = ::opendir(Real(dir).c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> DiskFs::ReadLink(const std::string& path) const {
  char buf[4096];
  ssize_t n = ::readlink(Real(path, false).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<SpaceInfo> DiskFs::Space(const std::string& path) const {
  if (!live_) return std::nullopt;  // a fixture directory's filesystem says nothing about the host it models
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  return SpaceInfo{static_cast<uint64_t>(st.f_blocks) * st.f_frsize,
                   static_cast<uint64_t>(st.f_bavail) * st.f_frsize};
}

WriteResult DiskFs::MakeDirs(const std::string& path, unsigned mode) {
  std::string host = Real(path);
  std::string cur;
  for (size_t i = 1; i <= host.size(); ++i) {
    if (i == host.size() || host[i] == '/') {
      cur = host.substr(0, i);
      if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST)
        return {false, ErrnoText("cannot create", cur), ""};
    }
  }
  return {};
}

WriteResult DiskFs::WriteAtomic(const std::string& path, const std::string& contents, unsigned mode,
                                bool keep_backup) {
  std::string target = path;
  if (keep_backup) {
    WriteTarget t = ResolveWriteTarget(*this, path);
    if (!t.error.empty()) return {false, t.error, ""};
    target = t.path;
  }
  const std::string host = Real(target, false);
  if (auto r = MakeDirs(RootedParent(target), 0755); !r.ok) return r;
  std::string tmp;
  int fd = CreateTemp(host, tmp);
  if (fd < 0) return {false, ErrnoText("cannot create a temporary file beside", host), ""};
  if (!WriteAll(fd, contents) || ::fsync(fd) != 0) {
    WriteResult r{false, ErrnoText("cannot write", tmp), ""};
    ::close(fd);
    ::unlink(tmp.c_str());
    return r;
  }
  if (::fchmod(fd, mode) != 0) {
    WriteResult r{false, ErrnoText("cannot set the mode of", tmp), ""};
    ::close(fd);
    ::unlink(tmp.c_str());
    return r;
  }
  ::close(fd);
  WriteResult result;
  struct stat st;
  if (keep_backup && ::stat(host.c_str(), &st) == 0) {
    result = KeepBackupLink(*this, target, host, tmp);
    if (!result.ok) return result;
  }
  if (::rename(tmp.c_str(), host.c_str()) != 0) {
    WriteResult r{false, ErrnoText("cannot replace", host), ""};
    ::unlink(tmp.c_str());
    return r;
  }
  FsyncDir(RootedParent(host));
  return result;
}

WriteResult DiskFs::Rename(const std::string& from, const std::string& to) {
  if (::rename(Real(from, false).c_str(), Real(to, false).c_str()) != 0)
    return {false, ErrnoText("cannot move", Real(from, false)), ""};
  FsyncDir(RootedParent(Real(to, false)));
  return {};
}

WriteResult DiskFs::Remove(const std::string& path) {
  if (::unlink(Real(path, false).c_str()) != 0 && errno != ENOENT)
    return {false, ErrnoText("cannot remove", Real(path, false)), ""};
  return {};
}

std::string WhyUnreadable(const Fs& fs, const std::string& path, const std::string& shown, size_t limit) {
  const std::string head = "cannot read " + shown + ": ";
  if (!fs.Exists(path)) {
    const bool loop = !path.empty() && path[0] == '/' && !ResolvePath(fs, path).error.empty();
    return head + (loop ? "too many levels of symbolic links" : "no such file");
  }
  if (fs.IsDir(path)) return head + "a directory, not a file";
  auto first = fs.ReadPrefix(path, 1);
  if (!first) return head + "not a regular file, or permission denied";
  return head + "larger than the " + HumanBytes(limit) + " limit";
}

std::optional<std::string> ReadWithin(const Fs& fs, const std::string& path, const std::string& shown,
                                      size_t limit, std::string& why) {
  auto text = fs.ReadPrefix(path, limit + 1);
  if (text && text->size() <= limit) return text;
  why = WhyUnreadable(fs, path, shown, limit);
  return std::nullopt;
}

}  // namespace gp::sys
