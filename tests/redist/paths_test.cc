// Archive entry rules (redist/paths.h), table-driven: what lands where, and every way out refused.
#include "redist/paths.h"

#include <catch2/catch.hpp>

using gp::sys::ArchiveEntry;
using T = ArchiveEntry::Type;

namespace {
const std::string kTop = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive";

std::string Place(const std::string& path, T type = T::kFile, const std::string& link = "") {
  ArchiveEntry e;
  e.path = path;
  e.type = type;
  e.link = link;
  std::string rel, rel_link;
  std::string why = gp::redist::PlaceEntry(e, kTop, rel, rel_link);
  if (!why.empty()) return "refused: " + why;
  return rel + (rel_link.empty() ? "" : " => " + rel_link);
}
}  // namespace

TEST_CASE("redist paths: NVIDIA's layout lands under the prefix", "[redist]") {
  CHECK(Place(kTop + "/", T::kDir) == "");
  CHECK(Place(kTop + "/include/cudnn_version.h") == "include/cudnn_version.h");
  CHECK(Place(kTop + "/lib/libcudnn.so.9", T::kSymlink, "libcudnn.so.9.12.0.46") == "lib/libcudnn.so.9");
  CHECK(Place("./" + kTop + "/lib/./x.so") == "lib/x.so");
  CHECK(Place(kTop + "/lib/hard", T::kHardlink, kTop + "/lib/x.so") == "lib/hard => lib/x.so");
  CHECK(Place(kTop + "/include/sub/l", T::kSymlink, "../cudnn.h") == "include/sub/l");
}

TEST_CASE("redist paths: every way out of the prefix is refused", "[redist]") {
  const std::string p = "refused: archive entry \"";
  CHECK(Place("/etc/passwd") == p + "/etc/passwd\": absolute path");
  CHECK(Place(kTop + "/../../evil") == p + kTop + "/../../evil\": \"..\" climbs out of the prefix");
  CHECK(Place(kTop + "/lib/../lib/x") == p + kTop + "/lib/../lib/x\": \"..\" climbs out of the prefix");
  CHECK(Place("other/x") == p + "other/x\": outside the archive's top directory " + kTop + "/");
  CHECK(Place(kTop + "-evil/x") == p + kTop + "-evil/x\": outside the archive's top directory " + kTop + "/");
  CHECK(Place(kTop + "/lib/nvidia0", T::kOther) == p + kTop + "/lib/nvidia0\": a device, FIFO or socket");
  CHECK(Place(kTop + "/lib/e", T::kSymlink, "/etc") ==
        p + kTop + "/lib/e\": symlink to \"/etc\" leaves the prefix");
  CHECK(Place(kTop + "/lib/e", T::kSymlink, "../../x") ==
        p + kTop + "/lib/e\": symlink to \"../../x\" leaves the prefix");
  CHECK(Place(kTop + "/lib/e", T::kSymlink, "..") ==
        p + kTop + "/lib/e\": symlink to \"..\" leaves the prefix");
  CHECK(Place(kTop + "/lib/up", T::kSymlink, "s/../../x") ==
        p + kTop + "/lib/up\": symlink to \"s/../../x\" climbs after a name");
  CHECK(Place(kTop + "/lib/h", T::kHardlink, "/etc/passwd") ==
        p + kTop + "/lib/h\": hard link to \"/etc/passwd\" leaves the prefix");
  CHECK(Place(kTop + "/lib/h", T::kHardlink, "other/x") ==
        p + kTop + "/lib/h\": hard link to \"other/x\" leaves the prefix");
  CHECK(Place(kTop, T::kSymlink, "/") == p + kTop + "\": a link in place of the top directory");
  CHECK(Place(kTop, T::kFile) == p + kTop + "\": a file in place of the top directory");
  CHECK(Place("") == p + "\": empty name");
}

TEST_CASE("redist paths: safe relative paths", "[redist]") {
  using gp::redist::IsSafeRelativePath;
  CHECK(IsSafeRelativePath("cudnn/linux-x86_64/a.tar.xz"));
  CHECK_FALSE(IsSafeRelativePath("/cudnn/a.tar.xz"));
  CHECK_FALSE(IsSafeRelativePath("cudnn/../../a.tar.xz"));
  CHECK_FALSE(IsSafeRelativePath("cudnn//a.tar.xz"));
  CHECK_FALSE(IsSafeRelativePath("./a.tar.xz"));
  CHECK_FALSE(IsSafeRelativePath(""));
}

TEST_CASE("redist paths: a hard link must name a regular file an earlier entry left there", "[redist]") {
  gp::redist::ArchivePlacement place(kTop);
  auto add = [&](const std::string& path, T type, const std::string& link = "") {
    ArchiveEntry e;
    e.path = kTop + "/" + path;
    e.type = type;
    e.link = link.empty() ? "" : kTop + "/" + link;
    if (type == T::kSymlink) e.link = link;
    std::string rel, rel_link;
    std::string why = place.Place(e, rel, rel_link);
    return why.empty() ? rel + (rel_link.empty() ? "" : " => " + rel_link) : "refused: " + why;
  };
  const std::string p = "refused: archive entry \"" + kTop + "/";
  CHECK(add("lib", T::kDir) == "lib");
  CHECK(add("lib/libx.so.1", T::kFile) == "lib/libx.so.1");
  CHECK(add("lib/hard", T::kHardlink, "lib/libx.so.1") == "lib/hard => lib/libx.so.1");
  CHECK(add("lib/hard2", T::kHardlink, "lib/hard") == "lib/hard2 => lib/hard");  // a link to a link to a file
  // The finding: lib/a/b/up -> ../../../include stays inside from lib/a/b; the same text at the top climbs
  // out.
  CHECK(add("lib/a/b/up", T::kSymlink, "../../../include") == "lib/a/b/up");
  CHECK(add("include2", T::kHardlink, "lib/a/b/up") ==
        p + "include2\": hard link to \"" + kTop +
            "/lib/a/b/up\", a symbolic link (a hard link must name a regular file)");
  CHECK(add("lib2", T::kHardlink, "lib") ==
        p + "lib2\": hard link to \"" + kTop + "/lib\", a directory (a hard link must name a regular file)");
  CHECK(add("early", T::kHardlink, "lib/later.so") ==
        p + "early\": hard link to \"" + kTop +
            "/lib/later.so\", which no earlier entry of the archive is "
            "(a hard link must name a regular file)");
  // What is there now counts: a file replaced by a symbolic link is no longer a file to link to.
  CHECK(add("lib/libx.so.1", T::kSymlink, "libx.so.1.0") == "lib/libx.so.1");
  CHECK(add("lib/hard3", T::kHardlink, "lib/libx.so.1").rfind(p + "lib/hard3\": hard link to", 0) == 0);
}

TEST_CASE("redist paths: names and link targets longer than kMaxEntryPath are refused", "[redist]") {
  const std::string deep = kTop + "/" + std::string(gp::redist::kMaxEntryPath, 'a');
  CHECK(Place(deep) == "refused: archive entry \"" + deep.substr(0, 60) + "...\": a name of " +
                           std::to_string(deep.size()) + " bytes, longer than 1024");
  const std::string near = kTop + "/" + std::string(gp::redist::kMaxEntryPath - kTop.size() - 1, 'a');
  CHECK(Place(near) == near.substr(kTop.size() + 1));
  CHECK(Place(kTop + "/lib/l", T::kSymlink, std::string(1025, 'b')) ==
        "refused: archive entry \"" + kTop + "/lib/l\": a link target of 1025 bytes, longer than 1024");
}
