// sys/tree.h RemoveTree against real trees: deeper than PATH_MAX, links not followed, and a failure reported
// (the rest removed) rather than dropped.
#include "sys/tree.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "support/temp_dir.h"

using gp::sys::RemoveTree;

namespace {

using Dir = gp::test::TempDir;

void Touch(int dirfd, const char* name) {
  int fd = ::openat(dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "x", 1) == 1);
  ::close(fd);
}

// Sets or clears FS_IMMUTABLE_FL (root on ext4, xfs, btrfs...); false where the filesystem or the caller
// cannot.
bool Immutable(const std::string& path, bool on) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
  flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
  ok = ok && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("RemoveTree removes a tree whose paths are longer than PATH_MAX, links not followed",
          "[sys][tree]") {
  Dir outside, t;
  Touch(AT_FDCWD, (outside.path + "/keep").c_str());
  // 40 levels of 200-byte names: the deepest path is about 8 KB, twice PATH_MAX (nftw gave up there).
  const std::string name(200, 'd');
  int fd = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  size_t depth = t.path.size();
  for (int i = 0; i < 40; ++i) {
    REQUIRE(::mkdirat(fd, name.c_str(), 0755) == 0);
    if (i % 10 == 0) {
      Touch(fd, "file");
      REQUIRE(::symlinkat(outside.path.c_str(), fd, "out") == 0);  // followed, it would empty `outside`
      REQUIRE(::mkdirat(fd, "empty", 0755) == 0);
    }
    int sub = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(sub >= 0);
    ::close(fd);
    fd = sub;
    depth += 1 + name.size();
  }
  Touch(fd, "bottom");
  ::close(fd);
  REQUIRE(depth > PATH_MAX);

  auto r = RemoveTree(t.path);
  INFO(r.error);
  CHECK(r.ok);
  struct stat st {};
  CHECK(::lstat(t.path.c_str(), &st) != 0);
  CHECK(::access((outside.path + "/keep").c_str(), F_OK) == 0);
  CHECK(RemoveTree(t.path).ok);  // absent: nothing to do
}

TEST_CASE("RemoveTree removes what it can and says what it could not", "[sys][tree]") {
  Dir t;
  const std::string deep = t.path + "/lib/sub";
  REQUIRE(::mkdir((t.path + "/lib").c_str(), 0755) == 0);
  REQUIRE(::mkdir(deep.c_str(), 0755) == 0);
  Touch(AT_FDCWD, (deep + "/stuck").c_str());
  Touch(AT_FDCWD, (deep + "/a").c_str());
  Touch(AT_FDCWD, (t.path + "/b").c_str());
  if (!Immutable(deep + "/stuck", true)) {
    WARN("skipped: this filesystem or user cannot set the immutable flag, so no removal can be made to fail");
    return;
  }
  auto r = RemoveTree(t.path);
  Immutable(deep + "/stuck", false);
  CHECK_FALSE(r.ok);
  CHECK(r.error == "cannot remove " + t.path + ": 1 entry could not be removed; the first, lib/sub/stuck: " +
                       "Operation not permitted");
  CHECK(::access((deep + "/a").c_str(), F_OK) != 0);  // the rest went
  CHECK(::access((t.path + "/b").c_str(), F_OK) != 0);
  CHECK(::access((deep + "/stuck").c_str(), F_OK) == 0);
  CHECK(RemoveTree(t.path).ok);  // once it can go, it goes
}
