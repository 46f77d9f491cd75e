#include "sys/tree.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace gp::sys {
namespace {

WriteResult Fail(const std::string& what, const std::string& path, int err) {
  WriteResult r;
  r.ok = false;
  r.error = what + " " + path + ": " + ::strerror(err);
  return r;
}

std::string Parent(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

int RemoveOne(const char* path, const struct stat*, int type, struct FTW*) {
  int rc = type == FTW_DP ? ::rmdir(path) : ::unlink(path);
  return rc == 0 || errno == ENOENT ? 0 : -1;
}

}  // namespace

WriteResult RemoveTree(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? WriteResult{} : Fail("cannot remove", path, errno);
  if (!S_ISDIR(st.st_mode)) return ::unlink(path.c_str()) == 0 ? WriteResult{} : Fail("cannot remove", path, errno);
  if (::nftw(path.c_str(), &RemoveOne, 32, FTW_DEPTH | FTW_PHYS) != 0) return Fail("cannot remove", path, errno);
  return {};
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
  SyncDir(Parent(link));
  return {};
}

void RemoveIfEmpty(const std::string& path) { ::rmdir(path.c_str()); }

WriteResult RenameDir(const std::string& from, const std::string& to) {
  struct stat st{};
  if (::lstat(to.c_str(), &st) == 0) return Fail("cannot rename into", to, EEXIST);
  if (::rename(from.c_str(), to.c_str()) != 0) return Fail("cannot rename " + from + " to", to, errno);
  SyncDir(Parent(to));
  return {};
}

WriteResult ExchangeDirs(const std::string& a, const std::string& b, bool& unsupported) {
  unsupported = false;
  if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) != 0) {
    unsupported = errno == EINVAL || errno == ENOSYS;
    return Fail("cannot exchange " + a + " with", b, errno);
  }
  SyncDir(Parent(b));
  return {};
}

std::string MakeTempDir(const std::string& parent, const std::string& prefix, std::string& error) {
  std::string tmpl = parent + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = "cannot create a directory in " + parent + ": " + ::strerror(errno);
    return "";
  }
  ::chmod(buf.data(), 0755);
  return buf.data();
}

}  // namespace gp::sys
