// sys/archive.h ExtractTar's own bounds and refusals with real libarchive, over tars built in memory
// (tests/support/tar.h): the byte and entry limits stop before anything over them is written, hard links only
// to regular files, no sparse files.
#include "sys/archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "redist/loopback.h"
#include "support/tar.h"
#include "support/temp_dir.h"

using gp::sys::ArchiveEntry;
using gp::sys::ExtractResult;
using gp::test::TarEntry;

namespace {

using Dir = gp::test::TempDir;

// Hands out `head` and then `zeros` zero bytes (an archive too large to hold: a bomb made on the fly), in 64
// KiB pieces; counts what was read.
struct Source {
  std::string head;
  uint64_t zeros = 0;
  uint64_t given = 0;
  std::string piece = std::string(65536, '\0');
  long Read(const void** data) {
    if (given < head.size()) {
      const size_t n = std::min<size_t>(65536, head.size() - given);
      *data = head.data() + given;
      given += n;
      return static_cast<long>(n);
    }
    const uint64_t left = head.size() + zeros - given;
    if (left == 0) return 0;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(65536, left));
    *data = piece.data();
    given += n;
    return static_cast<long>(n);
  }
};

// Every entry where the archive says (the placer's rules are redist's; these tests are about the seam's own).
std::string Anywhere(const ArchiveEntry& e, std::string& rel, std::string& rel_link) {
  rel = e.path;
  rel_link = e.link;
  return "";
}

ExtractResult Extract(Source& src, const std::string& dest, gp::sys::ExtractLimits limits = {}) {
  return gp::sys::ExtractTar([&](const void** d) { return src.Read(d); }, dest, Anywhere, {}, limits);
}

bool Exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("ExtractTar: the byte limit stops at the first file that would pass it", "[sys][archive]") {
  Dir d;
  std::vector<TarEntry> files;
  for (int i = 0; i < 5; ++i) files.push_back({'0', "f" + std::to_string(i), "", std::string(1000, 'x')});
  Source src{gp::test::Tar(files)};
  auto r = Extract(src, d.path, {2500, 100});
  CHECK(r.over == ExtractResult::Over::kBytes);
  CHECK(r.error == "more than 2500 bytes of file data (\"f2\" would add 1000 to the 2000 written)");
  CHECK(r.bytes == 2000);
  CHECK(Exists(d.path + "/f1"));
  CHECK_FALSE(Exists(d.path + "/f2"));
  Source again{gp::test::Tar(files)};
  CHECK(Extract(again, d.path, {5000, 100}).ok());  // exactly at the limit is within it
}

TEST_CASE("ExtractTar: a file declaring GiBs of zeros is refused before a byte of it is written",
          "[sys][archive]") {
  Dir d;
  const uint64_t size = 16ull << 30;  // 16 GiB, more than a ustar size field holds: a pax size record
  Source src{gp::test::TarHeader({'0', "bomb", "", "", size}), size};
  auto r = Extract(src, d.path, {1u << 20, 100});
  CHECK(r.over == ExtractResult::Over::kBytes);
  CHECK(r.error == "more than 1048576 bytes of file data (\"bomb\" would add 17179869184 to the 0 written)");
  CHECK(r.bytes == 0);
  CHECK_FALSE(Exists(d.path + "/bomb"));
  CHECK(src.given < (1u << 20));  // and it stopped reading at once
}

TEST_CASE("ExtractTar: the entry limit stops before the entry past it", "[sys][archive]") {
  Dir d;
  std::vector<TarEntry> dirs;
  for (int i = 0; i < 5; ++i) dirs.push_back({'5', "d" + std::to_string(i) + "/", "", "", UINT64_MAX, 0755});
  Source src{gp::test::Tar(dirs)};
  auto r = Extract(src, d.path, {UINT64_MAX, 3});
  CHECK(r.over == ExtractResult::Over::kEntries);
  CHECK(r.error == "more than 3 entries");
  CHECK(r.entries == 3);
  CHECK(Exists(d.path + "/d2"));
  CHECK_FALSE(Exists(d.path + "/d3"));
}

TEST_CASE("ExtractTar: a hard link to a symbolic link is refused even when the placer allows it",
          "[sys][archive]") {
  Dir d;
  Source src{gp::test::Tar(
      {{'0', "file", "", "data"}, {'2', "up", "../../x"}, {'1', "ok", "file"}, {'1', "copy", "up"}})};
  auto r = Extract(src, d.path);
  CHECK(r.error == "archive entry \"copy\": hard link to \"up\", not a regular file");
  CHECK(Exists(d.path + "/ok"));
  CHECK_FALSE(Exists(d.path + "/copy"));
}

TEST_CASE("ExtractTar: sparse files are refused", "[sys][archive]") {
  Dir d, src_dir;
  // GNU tar's sparse format, from a real file with a hole (tar -S).
  const std::string f = src_dir.path + "/holes";
  REQUIRE(gp::test::Spawn({"sh", "-c",
                           "printf a > '" + f + "' && truncate -s 8M '" + f + "' && printf b >> '" + f +
                               "' && tar -S -cf '" + src_dir.path + "/s.tar' -C '" + src_dir.path +
                               "' holes"}) == 0);
  Source src{gp::test::Slurp(src_dir.path + "/s.tar")};
  auto r = Extract(src, d.path);
  CHECK(r.error == "archive entry \"holes\": a sparse file (holes are not accepted)");
}

namespace {
unsigned ModeOf(const std::string& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The process umask set for one scope (ExtractTar must not depend on it).
struct Umask {
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};
}  // namespace

TEST_CASE("ExtractTar: modes are set as the rules say, whatever the umask", "[sys][archive]") {
  for (mode_t mask : {mode_t(0), mode_t(077)}) {
    INFO("umask " << mask);
    Dir d;
    Source src{gp::test::Tar({{'5', "top", "", "", UINT64_MAX, 0777},
                              {'0', "top/data", "", "x", UINT64_MAX, 0666},
                              {'0', "top/private", "", "x", UINT64_MAX, 0600},
                              {'0', "top/tool", "", "x", UINT64_MAX, 0777},
                              {'0', "top/setuid", "", "x", UINT64_MAX, 06755},
                              {'0', "top/implicit/f", "", "x", UINT64_MAX, 0644}})};
    {
      Umask scoped(mask);
      REQUIRE(Extract(src, d.path).ok());
    }
    CHECK(ModeOf(d.path + "/top") == 0755);
    CHECK(ModeOf(d.path + "/top/data") == 0644);  // never group- or world-writable
    CHECK(ModeOf(d.path + "/top/private") == 0644);
    CHECK(ModeOf(d.path + "/top/tool") == 0755);      // an executable stays one
    CHECK(ModeOf(d.path + "/top/setuid") == 0755);    // no set-user-ID, set-group-ID or sticky bit
    CHECK(ModeOf(d.path + "/top/implicit") == 0755);  // a directory the archive does not list
    CHECK(ModeOf(d.path + "/top/implicit/f") == 0644);
  }
}
