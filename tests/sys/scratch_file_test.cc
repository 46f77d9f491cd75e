// sys/scratch_file.h against this machine's /tmp: a file created, written and read back in whichever mode
// the filesystem allows, and unlinked when the object goes; the directory checks.
#include "sys/scratch_file.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "support/temp_dir.h"

TEST_CASE("sys scratch file: written, read back and removed", "[sys]") {
  gp::test::TempDir dir;
  std::string err;
  const std::string name = "scratch";
  {
    auto f = gp::sys::ScratchFile::Create(dir.path, name, &err);
    REQUIRE(f);
    auto buf = gp::sys::AlignedAlloc(2 * gp::sys::kDirectAlign);
    REQUIRE(buf);
    std::memset(buf.get(), 'x', 2 * gp::sys::kDirectAlign);
    REQUIRE(f->Append(buf.get(), 2 * gp::sys::kDirectAlign, &err));
    REQUIRE(f->Sync(&err));
    if (!f->direct()) REQUIRE(f->DropCache(&err));
    std::memset(buf.get(), 0, 2 * gp::sys::kDirectAlign);
    REQUIRE(f->ReadAt(buf.get(), gp::sys::kDirectAlign, gp::sys::kDirectAlign, &err));
    CHECK(buf.get()[gp::sys::kDirectAlign - 1] == 'x');
    CHECK_FALSE(f->ReadAt(buf.get(), gp::sys::kDirectAlign, 2 * gp::sys::kDirectAlign, &err));
    CHECK(err.find("ended early") != std::string::npos);
    struct stat st {};
    CHECK(::stat((dir.path + "/" + name).c_str(), &st) == 0);
    // A second file of the same name is refused, not reused.
    CHECK_FALSE(gp::sys::ScratchFile::Create(dir.path, name, &err));
  }
  struct stat st {};
  CHECK(::stat((dir.path + "/" + name).c_str(), &st) != 0);
}

TEST_CASE("sys scratch file: what a directory is and its room", "[sys]") {
  gp::test::TempDir dir;
  auto d = gp::sys::DirSpaceOf(dir.path);
  CHECK(d.kind == gp::sys::DirSpace::kDirectory);
  CHECK(d.available);
  CHECK(gp::sys::DirSpaceOf(dir.path + "/missing").kind == gp::sys::DirSpace::kMissing);
  CHECK(gp::sys::DirSpaceOf("/proc/self/status").kind == gp::sys::DirSpace::kNotDirectory);
}
